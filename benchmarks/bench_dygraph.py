"""Dygraph (imperative) mode: MLP train step, the seed's MNIST CNN with Adam, per-op overhead.

- ``dygraph_mlp``: MLP 784-512-512-10, relu/relu/softmax + cross_entropy, SGD, batch 128, written
  with ``fluid.dygraph.Linear`` (same weights and data as ``bench_mlp``); against PyTorch eager,
  oar's static executor and the numpy floor. Target: oar (dygraph) <= 1.0 x torch eager at the
  default threads (run with ``--threads default``; with the numba plugin, the Linear layers'
  bias + relu and the backward's relu + bias and loss gradients run fused, as in the static
  plan).
- ``dygraph_mnist_cnn``: seed 004's MNIST model (Conv2D 5x5 -> max Pool2D -> Conv2D -> Pool2D ->
  Linear softmax), Adam, batch 100, against PyTorch eager and oar static.
- ``dygraph_per_op``: 200 ``x = x + y`` on [4] tensors in a Python loop (no autograd), against
  PyTorch eager. Target: oar <= 2 x torch per op. ``dygraph_per_op_taped``: the same with the
  first operand requiring a gradient, so both frameworks record their tape.
"""

from __future__ import annotations

import numpy as np
from benchlib import Benchmark, Unavailable, require

# --- MLP --------------------------------------------------------------------------------------------
BATCH, SIZES = 128, (784, 512, 512, 10)
LR = 0.01
_rng = np.random.default_rng(1)
X = _rng.standard_normal((BATCH, SIZES[0]), dtype=np.float32)
LABEL = _rng.integers(0, SIZES[-1], (BATCH, 1)).astype(np.int64)
WEIGHTS = [
    (
        _rng.standard_normal((a, b), dtype=np.float32) * np.float32(np.sqrt(2.0 / a)),
        _rng.uniform(-0.1, 0.1, b).astype(np.float32),
    )
    for a, b in zip(SIZES[:-1], SIZES[1:])
]


def _fluid():
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    return fluid


def _eager(build):
    """Build under ``fluid.dygraph.guard()``; the returned step re-installs that guard's tracer
    for its duration only (cheap), so static contenders built later stay static."""
    fluid = _fluid()
    from oar.framework.mode import _dygraph_tracer, _set_tracer

    with fluid.dygraph.guard():
        inner = build(fluid)
        tracer = _dygraph_tracer()

    def step():
        old = _set_tracer(tracer)
        try:
            return inner()
        finally:
            _set_tracer(old)

    return step


def mlp_dygraph_step():
    return _eager(_build_mlp)


def _build_mlp(fluid):
    init = fluid.initializer.NumpyArrayInitializer
    layers = []
    for i, (w, b) in enumerate(WEIGHTS):
        act = "softmax" if i == len(WEIGHTS) - 1 else "relu"
        layers.append(
            fluid.dygraph.Linear(
                w.shape[0],
                w.shape[1],
                act=act,
                param_attr=fluid.ParamAttr(initializer=init(w)),
                bias_attr=fluid.ParamAttr(initializer=init(b)),
            )
        )
    model = fluid.dygraph.Sequential(*layers)
    opt = fluid.optimizer.SGD(learning_rate=LR, parameter_list=model.parameters())
    x = fluid.dygraph.to_variable(X)
    label = fluid.dygraph.to_variable(LABEL)

    def step():
        loss = fluid.layers.mean(fluid.layers.cross_entropy(model(x), label))
        loss.backward()
        opt.minimize(loss)
        model.clear_gradients()
        return loss.numpy()

    return step


def mlp_static_step():
    from bench_mlp import oar_step

    return oar_step()


def mlp_numpy_step():
    from bench_mlp import numpy_step

    return numpy_step()


def mlp_torch_step():
    from bench_mlp import torch_step

    return torch_step()


# --- the seed's MNIST CNN -----------------------------------------------------------------------------
CNN_BATCH = 100
_crng = np.random.default_rng(2)
IMG = _crng.uniform(0, 1, (CNN_BATCH, 1, 28, 28)).astype(np.float32)
IMG_LABEL = _crng.integers(0, 10, (CNN_BATCH, 1)).astype(np.int64)
CONV1 = (_crng.normal(0, 0.2, (20, 1, 5, 5)).astype(np.float32), np.zeros(20, np.float32))
CONV2 = (_crng.normal(0, 0.05, (20, 20, 5, 5)).astype(np.float32), np.zeros(20, np.float32))
FC = (_crng.normal(0, 0.05, (980, 10)).astype(np.float32), np.zeros(10, np.float32))
CNN_LR = 0.001


def _need_ops(*types):
    from oar.plugins import registries

    missing = [t for t in types if t not in registries().ops]
    if missing:
        raise Unavailable(f"ops not installed yet: {missing}")


def cnn_dygraph_step():
    _fluid()
    _need_ops("conv2d", "pool2d")
    return _eager(_build_cnn)


def _build_cnn(fluid):
    from oar.fluid.dygraph.nn import Conv2D, Linear, Pool2D

    init = fluid.initializer.NumpyArrayInitializer

    def pa(a):
        return fluid.ParamAttr(initializer=init(a))

    class MNIST(fluid.dygraph.Layer):
        def __init__(self):
            super().__init__()
            self.conv1 = Conv2D(
                num_channels=1,
                num_filters=20,
                filter_size=5,
                stride=1,
                padding=2,
                act="relu",
                param_attr=pa(CONV1[0]),
                bias_attr=pa(CONV1[1]),
            )
            self.pool1 = Pool2D(pool_size=2, pool_stride=2, pool_type="max")
            self.conv2 = Conv2D(
                num_channels=20,
                num_filters=20,
                filter_size=5,
                stride=1,
                padding=2,
                act="relu",
                param_attr=pa(CONV2[0]),
                bias_attr=pa(CONV2[1]),
            )
            self.pool2 = Pool2D(pool_size=2, pool_stride=2, pool_type="max")
            self.fc = Linear(
                input_dim=980,
                output_dim=10,
                act="softmax",
                param_attr=pa(FC[0]),
                bias_attr=pa(FC[1]),
            )

        def forward(self, inputs):
            x = self.pool1(self.conv1(inputs))
            x = self.pool2(self.conv2(x))
            x = fluid.layers.reshape(x, [x.shape[0], 980])
            return self.fc(x)

    model = MNIST()
    opt = fluid.optimizer.AdamOptimizer(learning_rate=CNN_LR, parameter_list=model.parameters())
    img, label = fluid.dygraph.to_variable(IMG), fluid.dygraph.to_variable(IMG_LABEL)

    def step():
        loss = fluid.layers.mean(fluid.layers.cross_entropy(model(img), label))
        loss.backward()
        opt.minimize(loss)
        model.clear_gradients()
        return loss.numpy()

    return step


def cnn_static_step():
    fluid = _fluid()
    _need_ops("conv2d", "pool2d")
    init = fluid.initializer.NumpyArrayInitializer
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="img", shape=[1, 28, 28], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        h = x
        for w, b in (CONV1, CONV2):
            h = fluid.layers.conv2d(
                h,
                num_filters=20,
                filter_size=5,
                stride=1,
                padding=2,
                act="relu",
                param_attr=fluid.ParamAttr(initializer=init(w)),
                bias_attr=fluid.ParamAttr(initializer=init(b)),
            )
            h = fluid.layers.pool2d(h, pool_size=2, pool_stride=2, pool_type="max")
        h = fluid.layers.fc(
            h,
            size=10,
            act="softmax",
            param_attr=fluid.ParamAttr(initializer=init(FC[0])),
            bias_attr=fluid.ParamAttr(initializer=init(FC[1])),
        )
        loss = fluid.layers.mean(fluid.layers.cross_entropy(input=h, label=label))
        fluid.optimizer.Adam(learning_rate=CNN_LR).minimize(loss, startup)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"img": IMG, "label": IMG_LABEL}

    def step():
        return exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]

    return step


def cnn_torch_step():
    torch = require("torch")
    F = torch.nn.functional
    params = [
        torch.from_numpy(a.copy()).requires_grad_() for pair in (CONV1, CONV2, FC) for a in pair
    ]
    c1w, c1b, c2w, c2b, fw, fb = params
    opt = torch.optim.Adam(params, lr=CNN_LR, eps=1e-8)
    x, lab = torch.from_numpy(IMG), torch.from_numpy(IMG_LABEL).reshape(-1)

    def step():
        h = F.max_pool2d(torch.relu(F.conv2d(x, c1w, c1b, padding=2)), 2, 2)
        h = F.max_pool2d(torch.relu(F.conv2d(h, c2w, c2b, padding=2)), 2, 2)
        loss = F.cross_entropy(h.reshape(h.shape[0], 980) @ fw + fb, lab)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach().numpy().reshape(1)

    return step


# --- per-op overhead --------------------------------------------------------------------------------
N_OPS = 200
A4 = np.linspace(0.0, 1.0, 4, dtype=np.float32)
B4 = np.full(4, 1e-3, np.float32)


def perop_oar_step():
    return _eager(_build_perop)


def _build_perop(fluid):
    a, b = fluid.dygraph.to_variable(A4), fluid.dygraph.to_variable(B4)

    def step():
        x = a
        for _ in range(N_OPS):
            x = x + b
        return x.numpy()

    return step


def perop_torch_step():
    torch = require("torch")
    a, b = torch.from_numpy(A4.copy()), torch.from_numpy(B4.copy())

    def step():
        x = a
        for _ in range(N_OPS):
            x = x + b
        return x.numpy()

    return step


def _build_perop_grad(fluid):
    a, b = fluid.dygraph.to_variable(A4), fluid.dygraph.to_variable(B4)
    a.stop_gradient = False

    def step():
        x = a
        for _ in range(N_OPS):
            x = x + b
        return x.numpy()

    return step


def perop_grad_oar_step():
    return _eager(_build_perop_grad)


def perop_grad_torch_step():
    torch = require("torch")
    a, b = torch.from_numpy(A4.copy()).requires_grad_(), torch.from_numpy(B4.copy())

    def step():
        x = a
        for _ in range(N_OPS):
            x = x + b
        return x.detach().numpy()

    return step


def perop_numpy_step():
    def step():
        x = A4
        for _ in range(N_OPS):
            x = x + B4
        return x

    return step


BENCHMARKS = [
    Benchmark(
        "dygraph_mlp",
        "MLP 784-512-512-10 SGD train step, batch 128, dygraph Linear layers",
        {
            "oar": mlp_dygraph_step,
            "oar_static": mlp_static_step,
            "numpy": mlp_numpy_step,
            "torch": mlp_torch_step,
        },
        targets={"oar/torch": 1.0},
        rtol=1e-4,
        atol=1e-5,
    ),
    Benchmark(
        "dygraph_mnist_cnn",
        "seed 004 MNIST CNN (2x conv5x5+maxpool, fc softmax) Adam step, batch 100",
        {"oar": cnn_dygraph_step, "oar_static": cnn_static_step, "torch": cnn_torch_step},
        rtol=1e-4,
        atol=1e-5,
    ),
    Benchmark(
        "dygraph_per_op",
        "200 eager adds on [4] tensors (Python loop, no autograd)",
        {"oar": perop_oar_step, "numpy": perop_numpy_step, "torch": perop_torch_step},
        ops_per_step=N_OPS,
        targets={"oar/torch": 2.0},
    ),
    Benchmark(
        "dygraph_per_op_taped",
        "200 eager adds on [4] tensors recording the autograd tape",
        {"oar": perop_grad_oar_step, "numpy": perop_numpy_step, "torch": perop_grad_torch_step},
        ops_per_step=N_OPS,
    ),
]
