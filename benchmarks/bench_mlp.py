"""MLP 784-512-512-10 train step: relu, relu, softmax + cross_entropy, mean, SGD, batch 128.

Big enough that the math (eight GEMMs) dominates: the goal is the numpy floor,
the same forward + backward + update written by hand in float32.
"""

from __future__ import annotations

import numpy as np
from benchlib import Benchmark, Unavailable, require

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


def oar_step(place=None):
    """oar's step on ``place`` (default the CPU; bench_cuda passes CUDAPlace(0))."""
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    init = fluid.initializer.NumpyArrayInitializer
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[SIZES[0]], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        h = x
        for i, (w, b) in enumerate(WEIGHTS):
            act = "softmax" if i == len(WEIGHTS) - 1 else "relu"
            h = fluid.layers.fc(
                h,
                size=w.shape[1],
                act=act,
                param_attr=fluid.ParamAttr(initializer=init(w)),
                bias_attr=fluid.ParamAttr(initializer=init(b)),
            )
        loss = fluid.layers.mean(fluid.layers.cross_entropy(input=h, label=label))
        fluid.optimizer.SGD(learning_rate=LR).minimize(loss, startup)
    exe = fluid.Executor(place or fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": X, "label": LABEL}
    fetch = [loss]

    def step():
        return exe.run(main, feed=feed, fetch_list=fetch, scope=scope)[0]

    return step


def deterministic(factory):
    """``factory``'s oar step run under ``FLAGS_cpu_deterministic`` (large products split on
    oar's own pool at one BLAS thread, the same bits at any thread count, instead of one call
    on OpenBLAS's threads): what that guarantee costs, measured in the same run."""

    def make():
        step = factory()
        from oar import fluid

        def det_step():
            fluid.set_flags({"FLAGS_cpu_deterministic": True})
            try:
                return step()
            finally:
                fluid.set_flags({"FLAGS_cpu_deterministic": False})

        return det_step

    return make


def numpy_step():
    """Forward, analytic backward (fused softmax + cross-entropy gradient), in-place SGD."""
    (w1, b1), (w2, b2), (w3, b3) = [(w.copy(), b.copy()) for w, b in WEIGHTS]
    lr = np.float32(LR)
    rows = np.arange(BATCH)
    lab = LABEL.reshape(-1)
    inv_n = np.float32(1.0 / BATCH)

    def step():
        h1 = X @ w1
        h1 += b1
        np.maximum(h1, 0, out=h1)
        h2 = h1 @ w2
        h2 += b2
        np.maximum(h2, 0, out=h2)
        p = h2 @ w3
        p += b3
        p -= p.max(axis=1, keepdims=True)
        np.exp(p, out=p)
        p /= p.sum(axis=1, keepdims=True)
        loss = -np.mean(np.log(p[rows, lab]), dtype=np.float32).reshape(1)
        # backward: d loss / d logits = (softmax - onehot) / N
        p[rows, lab] -= 1
        p *= inv_n
        dw3 = h2.T @ p
        dh2 = p @ w3.T
        dh2 *= h2 > 0
        dw2 = h1.T @ dh2
        dh1 = dh2 @ w2.T
        dh1 *= h1 > 0
        dw1 = X.T @ dh1
        for w, b, dw, d in ((w3, b3, dw3, p), (w2, b2, dw2, dh2), (w1, b1, dw1, dh1)):
            dw *= lr
            w -= dw
            b -= lr * d.sum(axis=0)
        return loss

    return step


def torch_step():
    torch = require("torch")
    params = []
    for w, b in WEIGHTS:
        params += [
            torch.from_numpy(w.copy()).requires_grad_(),
            torch.from_numpy(b.copy()).requires_grad_(),
        ]
    w1, b1, w2, b2, w3, b3 = params
    opt = torch.optim.SGD(params, lr=LR)
    F = torch.nn.functional

    def step():
        x, lab = torch.from_numpy(X), torch.from_numpy(LABEL).reshape(-1)
        h = torch.relu(x @ w1 + b1)
        h = torch.relu(h @ w2 + b2)
        loss = F.cross_entropy(h @ w3 + b3, lab)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach().numpy().reshape(1)

    return step


def paddle_step():
    fluid = require("paddle.fluid")
    init = fluid.initializer.NumpyArrayInitializer
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[SIZES[0]], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        h = x
        for i, (w, b) in enumerate(WEIGHTS):
            act = "softmax" if i == len(WEIGHTS) - 1 else "relu"
            h = fluid.layers.fc(
                h,
                size=w.shape[1],
                act=act,
                param_attr=fluid.ParamAttr(initializer=init(w)),
                bias_attr=fluid.ParamAttr(initializer=init(b)),
            )
        loss = fluid.layers.mean(fluid.layers.cross_entropy(input=h, label=label))
        fluid.optimizer.SGD(learning_rate=LR).minimize(loss, startup)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": X, "label": LABEL}

    def step():
        return exe.run(main, feed=feed, fetch_list=[loss], scope=scope, use_program_cache=True)[0]

    return step


BENCHMARKS = [
    Benchmark(
        name="mlp",
        description=f"MLP {'-'.join(map(str, SIZES))} relu + softmax cross_entropy + mean, SGD, batch {BATCH}",
        contenders={
            "oar": oar_step,
            "oar_deterministic": deterministic(oar_step),
            "numpy": numpy_step,
            "torch": torch_step,
            "paddle": paddle_step,
        },
        targets={"oar/numpy": 1.15},
        memory=True,
    )
]
