"""Inference latency through the zero-copy predictor (oar-deploy), passes on and off.

Models: the MLP 784-512-512-10 (relu, softmax) at batch 1 and 256, and an MNIST
CNN with batch_norm and dropout (conv 1->20 5x5 pad 2 + bn + relu + max-pool 2,
conv 20->20 5x5 pad 2 + bn + relu + max-pool 2, dropout 0.5, fc 980->10
softmax) at batch 1 and 64. One step = copy the batch in, run, read the
output.

Contenders: ``oar`` (``create_paddle_predictor`` with the inference passes,
zero-copy tensors), ``oar_nopass`` (the same with ``switch_ir_optim(False)``),
``numpy`` (the floor: the same inference by hand, batch_norm folded into the
conv weights and dropout into the fc weight as a competent numpy programmer
would), ``torch`` (``torch.inference_mode``, eval mode) and ``onnxrt``
(onnxruntime on the model exported by ``oar.onnx.export``, one intra-op thread
under ``--threads 1``). Target: oar <= 1.3 x the numpy floor.
"""

from __future__ import annotations

import functools
import tempfile

import numpy as np
from benchlib import Benchmark, Unavailable, require

_rng = np.random.default_rng(7)
MLP_SIZES = (784, 512, 512, 10)
MLP_W = [
    (
        (_rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(np.float32),
        (_rng.standard_normal(b) * 0.1).astype(np.float32),
    )
    for a, b in zip(MLP_SIZES, MLP_SIZES[1:])
]
CNN_C = 20
CNN_W1 = (_rng.standard_normal((CNN_C, 1, 5, 5)) * np.sqrt(2 / 25)).astype(np.float32)
CNN_B1 = (_rng.standard_normal(CNN_C) * 0.1).astype(np.float32)
CNN_W2 = (_rng.standard_normal((CNN_C, CNN_C, 5, 5)) * np.sqrt(2 / 500)).astype(np.float32)
CNN_B2 = (_rng.standard_normal(CNN_C) * 0.1).astype(np.float32)
CNN_W3 = (_rng.standard_normal((980, 10)) * np.sqrt(1 / 980)).astype(np.float32)
CNN_B3 = np.zeros(10, np.float32)
# batch_norm: scale, shift, moving mean, moving variance per conv
CNN_BN = [
    (
        _rng.uniform(0.5, 1.5, CNN_C).astype(np.float32),
        (_rng.standard_normal(CNN_C) * 0.1).astype(np.float32),
        (_rng.standard_normal(CNN_C) * 0.1).astype(np.float32),
        _rng.uniform(0.5, 2.0, CNN_C).astype(np.float32),
    )
    for _ in range(2)
]
BN_EPS, DROP = 1e-5, 0.5
INPUTS = {
    ("mlp", 1): _rng.random((1, 784), dtype=np.float32),
    ("mlp", 256): _rng.random((256, 784), dtype=np.float32),
    ("cnn", 1): _rng.random((1, 1, 28, 28), dtype=np.float32),
    ("cnn", 64): _rng.random((64, 1, 28, 28), dtype=np.float32),
}


# --- the model, built and saved once with oar (shared by oar, oar_nopass and onnxruntime) ---
def _attr(fluid, a):
    return fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(a))


def _build_mlp(fluid):
    x = fluid.data(name="x", shape=[None, 784], dtype="float32")
    h = x
    for i, (w, b) in enumerate(MLP_W):
        act = "softmax" if i == len(MLP_W) - 1 else "relu"
        h = fluid.layers.fc(
            h, w.shape[1], act=act, param_attr=_attr(fluid, w), bias_attr=_attr(fluid, b)
        )
    return h


def _build_cnn(fluid):
    x = fluid.data(name="x", shape=[None, 1, 28, 28], dtype="float32")
    h = x
    for w, b, (g, beta, _mean, _var) in ((CNN_W1, CNN_B1, CNN_BN[0]), (CNN_W2, CNN_B2, CNN_BN[1])):
        h = fluid.layers.conv2d(
            h, CNN_C, 5, padding=2, param_attr=_attr(fluid, w), bias_attr=_attr(fluid, b)
        )
        h = fluid.layers.batch_norm(
            h,
            act="relu",
            epsilon=BN_EPS,
            param_attr=_attr(fluid, g),
            bias_attr=_attr(fluid, beta),
            moving_mean_name=fluid.unique_name.generate("bn_mean"),
            moving_variance_name=fluid.unique_name.generate("bn_var"),
        )
        h = fluid.layers.pool2d(h, 2, "max", 2)
    h = fluid.layers.dropout(h, DROP)
    return fluid.layers.fc(
        h, 10, act="softmax", param_attr=_attr(fluid, CNN_W3), bias_attr=_attr(fluid, CNN_B3)
    )


@functools.cache
def _saved(model: str) -> str:
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    try:
        fluid.core.AnalysisConfig  # noqa: B018  (oar-deploy installed?)
    except Exception as exc:
        raise Unavailable(f"oar-deploy: {exc}") from None
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        out = (_build_mlp if model == "mlp" else _build_cnn)(fluid)
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    dirname = tempfile.mkdtemp(prefix=f"oar-bench-{model}-")
    with fluid.scope_guard(scope):
        exe.run(startup)
        if model == "cnn":  # the moving statistics a trained model would have
            names = [v.name for v in main.list_vars() if v.persistable]
            for i, (_, _, mean, var) in enumerate(CNN_BN):
                m = [n for n in names if n.startswith("bn_mean")][i]
                v = [n for n in names if n.startswith("bn_var")][i]
                scope.var(m).get_tensor().set(mean)
                scope.var(v).get_tensor().set(var)
        fluid.io.save_inference_model(dirname, ["x"], [out], exe, main)
    return dirname


def _oar(model: str, batch: int, ir_optim: bool):
    from oar import fluid

    config = fluid.core.AnalysisConfig(_saved(model))
    config.switch_ir_optim(ir_optim)
    config.switch_use_feed_fetch_ops(False)
    config.disable_gpu()
    pred = fluid.core.create_paddle_predictor(config)
    inp = pred.get_input_tensor("x")
    out = pred.get_output_tensor(pred.get_output_names()[0])
    x = INPUTS[(model, batch)]

    def step():
        inp.copy_from_cpu(x)
        pred.zero_copy_run()
        return out.copy_to_cpu()

    return step


# --- the numpy floor ------------------------------------------------------------------------
def _softmax(p):
    p -= p.max(axis=1, keepdims=True)
    np.exp(p, out=p)
    p /= p.sum(axis=1, keepdims=True)
    return p


def _numpy_mlp(batch: int):
    x = INPUTS[("mlp", batch)]

    def step():
        h = x
        for i, (w, b) in enumerate(MLP_W):
            h = h @ w
            h += b
            if i < len(MLP_W) - 1:
                np.maximum(h, 0, out=h)
        return _softmax(h)

    return step


def _fold(w, b, bn):
    g, beta, mean, var = (a.astype(np.float64) for a in bn)
    s = g / np.sqrt(var + BN_EPS)
    return (w * s[:, None, None, None]).astype(np.float32), ((b - mean) * s + beta).astype(
        np.float32
    )


def _conv_relu_pool(x, w, b):
    """5x5 pad-2 conv as im2col + GEMM over batch chunks of ~1.5 MB of columns (kept in
    cache), bias, relu, 2x2 max-pool; NCHW out."""
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (2, 2), (2, 2)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (5, 5), axis=(2, 3))  # (N,C,H,W,5,5)
    wm = w.reshape(w.shape[0], -1).T
    out = np.empty((n, h // 2, wd // 2, w.shape[0]), np.float32)
    step = max(1, int(1.5e6 // (h * wd * c * 25 * 4)))
    for i in range(0, n, step):
        m = min(step, n - i)
        cols = win[i : i + m].transpose(0, 2, 3, 1, 4, 5).reshape(m * h * wd, c * 25)
        y = cols @ wm  # (m*H*W, O)
        y += b
        np.maximum(y, 0, out=y)
        out[i : i + m] = y.reshape(m, h // 2, 2, wd // 2, 2, -1).max(axis=(2, 4))
    return out.transpose(0, 3, 1, 2)


def _numpy_cnn(batch: int):
    x = INPUTS[("cnn", batch)]
    w1, b1 = _fold(CNN_W1, CNN_B1, CNN_BN[0])
    w2, b2 = _fold(CNN_W2, CNN_B2, CNN_BN[1])
    w3 = CNN_W3 * np.float32(1 - DROP)  # dropout in inference: downgrade_in_infer

    def step():
        h = _conv_relu_pool(_conv_relu_pool(x, w1, b1), w2, b2)
        p = h.reshape(batch, -1) @ w3
        p += CNN_B3
        return _softmax(p)

    return step


# --- torch and onnxruntime -----------------------------------------------------------------
def _torch(model: str, batch: int):
    torch = require("torch")
    nn = torch.nn
    t = torch.from_numpy
    if model == "mlp":
        layers = []
        for i, (w, b) in enumerate(MLP_W):
            lin = nn.Linear(*w.shape)
            lin.weight.data, lin.bias.data = t(w.T.copy()), t(b)
            layers += [lin, nn.ReLU() if i < len(MLP_W) - 1 else nn.Softmax(dim=1)]
        net = nn.Sequential(*layers)
    else:
        mods = []
        for w, b, (g, beta, mean, var) in (
            (CNN_W1, CNN_B1, CNN_BN[0]),
            (CNN_W2, CNN_B2, CNN_BN[1]),
        ):
            conv = nn.Conv2d(w.shape[1], CNN_C, 5, padding=2)
            conv.weight.data, conv.bias.data = t(w), t(b)
            bn = nn.BatchNorm2d(CNN_C, eps=BN_EPS)
            bn.weight.data, bn.bias.data = t(g), t(beta)
            bn.running_mean.data, bn.running_var.data = t(mean), t(var)
            mods += [conv, bn, nn.ReLU(), nn.MaxPool2d(2)]
        fc = nn.Linear(980, 10)
        fc.weight.data, fc.bias.data = t(CNN_W3.T.copy() * (1 - DROP)), t(CNN_B3)
        mods += [nn.Flatten(), fc, nn.Softmax(dim=1)]
        net = nn.Sequential(*mods)
    net.eval()
    x = INPUTS[(model, batch)]

    def step():
        with torch.inference_mode():
            return net(torch.from_numpy(x)).numpy()

    return step


def _onnxrt(model: str, batch: int):
    ort = require("onnxruntime")
    require("onnx")
    import oar.onnx
    from oar import fluid

    dirname = _saved(model)
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        prog, feeds, fetches = fluid.io.load_inference_model(dirname, exe)
    path = f"{dirname}/model.onnx"
    oar.onnx.export(prog, feeds, fetches, scope, path)
    opts = ort.SessionOptions()
    import os

    threads = os.environ.get("OMP_NUM_THREADS")
    if threads:  # run.py --threads N sets it; otherwise onnxruntime's default
        opts.intra_op_num_threads = int(threads)
        opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    x = INPUTS[(model, batch)]

    def step():
        return sess.run(None, {"x": x})[0]

    return step


def _bench(model: str, batch: int) -> Benchmark:
    what = "MLP 784-512-512-10" if model == "mlp" else "MNIST CNN (bn, dropout)"
    return Benchmark(
        name=f"infer_{model}_b{batch}",
        description=f"{what} inference, batch {batch}, zero-copy predictor",
        contenders={
            "oar": functools.partial(_oar, model, batch, True),
            "oar_nopass": functools.partial(_oar, model, batch, False),
            "numpy": functools.partial(_numpy_mlp if model == "mlp" else _numpy_cnn, batch),
            "torch": functools.partial(_torch, model, batch),
            "onnxrt": functools.partial(_onnxrt, model, batch),
        },
        targets={"oar/numpy": 1.3},
        rtol=1e-4,
        atol=1e-6,
    )


BENCHMARKS = [_bench("mlp", 1), _bench("mlp", 256), _bench("cnn", 1), _bench("cnn", 64)]
