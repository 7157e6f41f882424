"""MLP 784-512-512-10 train step with Adam (target: <= 0.9 x the numpy floor, with the numba
plugin; the numpy kernels alone: <= 1.15 x).

Same model, data and initial weights as ``bench_mlp`` (which uses SGD); the
floor is the same forward/backward by hand plus Adam written with numpy
in-place updates in float32, Fluid 1.8's formula:
``m = b1 m + (1-b1) g``, ``v = b2 v + (1-b2) g²``,
``p -= lr sqrt(1-b2^t)/(1-b1^t) * m / (sqrt(v) + eps)``.
"""

from __future__ import annotations

import importlib.util
import math
import os

import numpy as np
from bench_mlp import BATCH, LABEL, SIZES, WEIGHTS, X, deterministic
from benchlib import Benchmark, Unavailable, require

LR, B1, B2, EPS = 0.001, 0.9, 0.999, 1e-8


def _numba_plugin() -> bool:
    """Whether oar-kernels-numba is installed and not turned off (it sets the target)."""
    off = os.environ.get("OAR_DISABLE_PLUGINS", "")
    return importlib.util.find_spec("oar_kernels_numba") is not None and "kernels_numba" not in off


def oar_step():
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
        fluid.optimizer.Adam(learning_rate=LR, beta1=B1, beta2=B2, epsilon=EPS).minimize(
            loss, startup
        )
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": X, "label": LABEL}
    fetch = [loss]

    def step():
        return exe.run(main, feed=feed, fetch_list=fetch, scope=scope)[0]

    return step


def numpy_step():
    """Forward, analytic backward (fused softmax + cross-entropy gradient), in-place Adam."""
    params = [a.copy() for wb in WEIGHTS for a in wb]
    m1 = [np.zeros_like(p) for p in params]
    m2 = [np.zeros_like(p) for p in params]
    pows = [B1, B2]
    b1, b2 = float(np.float32(B1)), float(np.float32(B2))
    rows = np.arange(BATCH)
    lab = LABEL.reshape(-1)
    inv_n = np.float32(1.0 / BATCH)

    def adam(p, g, m, v):
        lr_t = LR * math.sqrt(1 - pows[1]) / (1 - pows[0])
        m *= b1
        m += (1 - b1) * g
        v *= b2
        g *= g
        g *= 1 - b2
        v += g
        d = np.sqrt(v)
        d += EPS
        np.divide(m, d, out=d)
        d *= lr_t
        p -= d

    def step():
        w1, b_1, w2, b_2, w3, b_3 = params
        h1 = X @ w1
        h1 += b_1
        np.maximum(h1, 0, out=h1)
        h2 = h1 @ w2
        h2 += b_2
        np.maximum(h2, 0, out=h2)
        p = h2 @ w3
        p += b_3
        p -= p.max(axis=1, keepdims=True)
        np.exp(p, out=p)
        p /= p.sum(axis=1, keepdims=True)
        loss = -np.mean(np.log(p[rows, lab]), dtype=np.float32).reshape(1)
        p[rows, lab] -= 1
        p *= inv_n
        dw3 = h2.T @ p
        dh2 = p @ w3.T
        dh2 *= h2 > 0
        dw2 = h1.T @ dh2
        dh1 = dh2 @ w2.T
        dh1 *= h1 > 0
        dw1 = X.T @ dh1
        grads = [dw1, dh1.sum(axis=0), dw2, dh2.sum(axis=0), dw3, p.sum(axis=0)]
        for i in range(6):
            adam(params[i], grads[i], m1[i], m2[i])
        pows[0] *= b1
        pows[1] *= b2
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
    opt = torch.optim.Adam(params, lr=LR, betas=(B1, B2), eps=EPS)
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


BENCHMARKS = [
    Benchmark(
        name="mlp_adam",
        description=f"MLP {'-'.join(map(str, SIZES))} relu + softmax cross_entropy + mean, Adam, batch {BATCH}",
        contenders={
            "oar": oar_step,
            "oar_deterministic": deterministic(oar_step),
            "numpy": numpy_step,
            "torch": torch_step,
        },
        targets={"oar/numpy": 0.9 if _numba_plugin() else 1.15},
        memory=True,
    )
]
