"""A ResNet-18-style CIFAR train step: conv3x3 + batch_norm + relu stem, four stages of two
basic blocks (channels W, 2W, 4W, 8W; stride 2 and a 1x1 conv + batch_norm shortcut entering
stages 2-4), global average pooling, fc to 10 classes, softmax cross-entropy, momentum SGD;
batch 32 of 3x32x32 images. W = 32 by default (``OAR_BENCH_RESNET_WIDTH``; 64 is the
original width, 4x the work).

Contenders start from the same weights (so their first-step losses agree) and run batch
norm in training mode. torch is a hand-written functional equivalent (no torchvision).
Target: oar <= 1.2 x PyTorch CPU.

oar runs with the kernel plugins installed, and prints which plugin serves each op type of
the step. With oar-kernels-numba, its conv2d computes the 3x3 stride-1 layers by Winograd
F(2x2, 3x3) and hands the stride-2, 1x1 and 3-channel stem convolutions to the numpy
kernel (im2col); batch_norm, relu, momentum and softmax are its compiled kernels too.
``OAR_DISABLE_PLUGINS=kernels_numba python benchmarks/run.py resnet`` measures the numpy
kernels alone.
"""

from __future__ import annotations

import os

import numpy as np
from benchlib import Benchmark, Unavailable, require

BATCH, CLASSES, LR, MOMENTUM, EPS = 32, 10, 0.01, 0.9, 1e-5
WIDTH = int(os.environ.get("OAR_BENCH_RESNET_WIDTH", "32"))
STAGES = [(WIDTH, 1), (2 * WIDTH, 2), (4 * WIDTH, 2), (8 * WIDTH, 2)]
_rng = np.random.default_rng(18)
X = _rng.standard_normal((BATCH, 3, 32, 32)).astype(np.float32)
LABEL = _rng.integers(0, CLASSES, (BATCH, 1)).astype(np.int64)


def _conv_w(o, c, k):
    return (_rng.standard_normal((o, c, k, k)) * np.sqrt(2.0 / (c * k * k))).astype(np.float32)


def _plan():
    """[(kind, params...)]: the layers in order, with their initial weights."""
    layers = [("stem", _conv_w(WIDTH, 3, 3))]
    c = WIDTH
    for ch, stride in STAGES:
        for b in range(2):
            s = stride if b == 0 else 1
            short = _conv_w(ch, c, 1) if (s != 1 or c != ch) else None
            layers.append(("block", _conv_w(ch, c, 3), _conv_w(ch, ch, 3), short, s))
            c = ch
    fc_w = (_rng.standard_normal((c, CLASSES)) * np.sqrt(1.0 / c)).astype(np.float32)
    layers.append(("fc", fc_w, np.zeros(CLASSES, np.float32)))
    return layers


PLAN = _plan()


def oar_step():
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    init = fluid.initializer.NumpyArrayInitializer

    def conv_bn(x, w, stride, act="relu"):
        pad = w.shape[2] // 2
        h = fluid.layers.conv2d(
            x,
            w.shape[0],
            w.shape[2],
            stride=stride,
            padding=pad,
            param_attr=fluid.ParamAttr(initializer=init(w)),
            bias_attr=False,
        )
        return fluid.layers.batch_norm(h, act=act, epsilon=EPS)

    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        img = fluid.data("img", [None, 3, 32, 32], "float32")
        label = fluid.data("label", [None, 1], "int64")
        h = img
        for layer in PLAN:
            if layer[0] == "stem":
                h = conv_bn(h, layer[1], 1)
            elif layer[0] == "block":
                _, w1, w2, short, s = layer
                y = conv_bn(conv_bn(h, w1, s), w2, 1, act=None)
                sc = conv_bn(h, short, s, act=None) if short is not None else h
                h = fluid.layers.relu(fluid.layers.elementwise_add(y, sc))
            else:
                h = fluid.layers.pool2d(h, pool_type="avg", global_pooling=True)
                logits = fluid.layers.fc(
                    h,
                    CLASSES,
                    param_attr=fluid.ParamAttr(initializer=init(layer[1])),
                    bias_attr=fluid.ParamAttr(initializer=init(layer[2])),
                )
        loss = fluid.layers.mean(fluid.layers.softmax_with_cross_entropy(logits, label))
        fluid.optimizer.Momentum(LR, MOMENTUM).minimize(loss, startup)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"img": X, "label": LABEL}
    print(f"  oar kernels: {_serving(main)}")

    def step():
        return exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]

    return step


def _serving(program) -> str:
    """``plugin: op, op...; plugin: ...`` for the cpu float32 kernels of ``program``'s ops."""
    from oar.api import registries

    by_plugin: dict = {}
    for op_type in sorted({op.type for op in program.global_block().ops}):
        entry = registries().kernels.lookup(op_type, "cpu", "float32")
        by_plugin.setdefault(entry.plugin if entry else "none", []).append(op_type)
    return "; ".join(f"{p}: {', '.join(ops)}" for p, ops in sorted(by_plugin.items()))


def torch_step():
    torch = require("torch")
    F = torch.nn.functional
    params = []

    def p(a):
        t = torch.from_numpy(a.copy()).requires_grad_()
        params.append(t)
        return t

    def bn_params(ch):
        return p(np.ones(ch, np.float32)), p(np.zeros(ch, np.float32))

    model = []
    for layer in PLAN:
        if layer[0] == "stem":
            model.append(("stem", p(layer[1]), *bn_params(layer[1].shape[0])))
        elif layer[0] == "block":
            _, w1, w2, short, s = layer
            entry = [p(w1), *bn_params(w1.shape[0]), p(w2), *bn_params(w2.shape[0])]
            entry += [p(short), *bn_params(short.shape[0])] if short is not None else [None] * 3
            model.append(("block", s, *entry))
        else:
            model.append(("fc", p(layer[1]), p(layer[2])))
    opt = torch.optim.SGD(params, lr=LR, momentum=MOMENTUM)

    def conv_bn(x, w, g, b, stride, relu=True):
        h = F.conv2d(x, w, stride=stride, padding=w.shape[2] // 2)
        h = F.batch_norm(h, None, None, g, b, training=True, eps=EPS)
        return torch.relu(h) if relu else h

    def step():
        h = torch.from_numpy(X)
        for m in model:
            if m[0] == "stem":
                h = conv_bn(h, *m[1:], 1)
            elif m[0] == "block":
                s, w1, g1, b1, w2, g2, b2, ws, gs, bs = m[1:]
                y = conv_bn(conv_bn(h, w1, g1, b1, s), w2, g2, b2, 1, relu=False)
                sc = conv_bn(h, ws, gs, bs, s, relu=False) if ws is not None else h
                h = torch.relu(y + sc)
            else:
                logits = h.mean(dim=(2, 3)) @ m[1] + m[2]
        loss = F.cross_entropy(logits, torch.from_numpy(LABEL).reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach().numpy().reshape(1)

    return step


BENCHMARKS = [
    Benchmark(
        name="resnet",
        description=f"ResNet-18-style CIFAR step (width {WIDTH}, conv+batch_norm+relu, 8 basic blocks, "
        f"global avg pool, fc 10), softmax CE, momentum SGD, batch {BATCH}",
        contenders={"oar": oar_step, "torch": torch_step},
        targets={"oar/torch": 1.2},
        rtol=2e-3,
        atol=2e-3,
    )
]
