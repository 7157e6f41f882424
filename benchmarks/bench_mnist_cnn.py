"""The seed's MNIST CNN train step: conv 1->20 5x5 pad 2 + relu + max-pool 2, conv 20->20 5x5 pad 2
+ relu + max-pool 2, fc 980->10 softmax, cross_entropy, mean, Adam, batch 64.

Contenders start from the same weights, so their first-step losses agree.
The numpy floor is the same step written by hand in float32 (windows via
``sliding_window_view`` + one tensordot per conv product, 2x2 pooling by
reshape, fused softmax + cross-entropy gradient, in-place Adam).
Target: oar <= 0.85 x PyTorch CPU at the default threads (``--threads default``; it was
1.5 x at one thread); peak memory reported against the floor.
"""

from __future__ import annotations

import numpy as np
from benchlib import Benchmark, Unavailable, require

BATCH, LR = 64, 0.001
B1, B2, EPS = 0.9, 0.999, 1e-8
_rng = np.random.default_rng(3)
X = _rng.random((BATCH, 1, 28, 28), dtype=np.float32)
LABEL = _rng.integers(0, 10, (BATCH, 1)).astype(np.int64)
W1 = (_rng.standard_normal((20, 1, 5, 5)) * np.sqrt(2 / 25)).astype(np.float32)
B1_ = np.zeros(20, np.float32)
W2 = (_rng.standard_normal((20, 20, 5, 5)) * np.sqrt(2 / 500)).astype(np.float32)
B2_ = np.zeros(20, np.float32)
W3 = (_rng.standard_normal((980, 10)) * np.sqrt(1 / 980)).astype(np.float32)
B3 = np.zeros(10, np.float32)
PARAMS = (W1, B1_, W2, B2_, W3, B3)


def oar_step():
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    init = fluid.initializer.NumpyArrayInitializer

    def attr(a):
        return fluid.ParamAttr(initializer=init(a))

    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        img = fluid.data(name="img", shape=[None, 1, 28, 28], dtype="float32")
        label = fluid.data(name="label", shape=[None, 1], dtype="int64")
        c1 = fluid.layers.conv2d(
            img, 20, 5, padding=2, act="relu", param_attr=attr(W1), bias_attr=attr(B1_)
        )
        p1 = fluid.layers.pool2d(c1, pool_size=2, pool_stride=2, pool_type="max")
        c2 = fluid.layers.conv2d(
            p1, 20, 5, padding=2, act="relu", param_attr=attr(W2), bias_attr=attr(B2_)
        )
        p2 = fluid.layers.pool2d(c2, pool_size=2, pool_stride=2, pool_type="max")
        pred = fluid.layers.fc(p2, 10, act="softmax", param_attr=attr(W3), bias_attr=attr(B3))
        loss = fluid.layers.mean(fluid.layers.cross_entropy(input=pred, label=label))
        fluid.optimizer.Adam(learning_rate=LR).minimize(loss, startup)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"img": X, "label": LABEL}

    def step():
        return exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]

    return step


def _windows(xp, k):
    from numpy.lib.stride_tricks import sliding_window_view

    return sliding_window_view(xp, (k, k), axis=(2, 3))  # (N, C, OH, OW, k, k)


def _conv(x, w, pad):
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.tensordot(_windows(xp, w.shape[2]), w, axes=([1, 4, 5], [1, 2, 3]))  # (N, OH, OW, O)
    return out.transpose(0, 3, 1, 2), xp


def _conv_grads(xp, w, dy, pad, need_dx):
    dw = np.tensordot(dy, _windows(xp, w.shape[2]), axes=([0, 2, 3], [0, 2, 3]))  # (O, C, k, k)
    dx = None
    if need_dx:
        k = w.shape[2]
        dyp = np.pad(dy, ((0, 0), (0, 0), (k - 1 - pad,) * 2, (k - 1 - pad,) * 2))
        dx = np.tensordot(
            _windows(dyp, k), w[:, :, ::-1, ::-1], axes=([1, 4, 5], [0, 2, 3])
        ).transpose(0, 3, 1, 2)
    return dw, dx


def _pool(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def _pool_grad(x, y, dy):
    n, c, h, w = x.shape
    hit = x.reshape(n, c, h // 2, 2, w // 2, 2) == y[:, :, :, None, :, None]
    return (hit * dy[:, :, :, None, :, None]).reshape(x.shape)


def numpy_step():
    params = [p.copy() for p in PARAMS]
    m1 = [np.zeros_like(p) for p in params]
    m2 = [np.zeros_like(p) for p in params]
    state = {"t": 0}
    rows, lab = np.arange(BATCH), LABEL.reshape(-1)

    def step():
        w1, b1, w2, b2, w3, b3 = params
        a1, xp1 = _conv(X, w1, 2)
        a1 = a1 + b1[:, None, None]
        np.maximum(a1, 0, out=a1)
        h1 = _pool(a1)
        a2, xp2 = _conv(h1, w2, 2)
        a2 = a2 + b2[:, None, None]
        np.maximum(a2, 0, out=a2)
        h2 = _pool(a2)
        f = h2.reshape(BATCH, -1)
        p = f @ w3
        p += b3
        p -= p.max(axis=1, keepdims=True)
        np.exp(p, out=p)
        p /= p.sum(axis=1, keepdims=True)
        loss = -np.mean(np.log(p[rows, lab]), dtype=np.float32).reshape(1)
        p[rows, lab] -= 1
        p *= np.float32(1.0 / BATCH)
        dw3, db3 = f.T @ p, p.sum(axis=0)
        dh2 = (p @ w3.T).reshape(h2.shape)
        da2 = _pool_grad(a2, h2, dh2) * (a2 > 0)
        dw2, dh1 = _conv_grads(xp2, w2, da2, 2, True)
        db2 = da2.sum(axis=(0, 2, 3))
        da1 = _pool_grad(a1, h1, dh1) * (a1 > 0)
        dw1, _ = _conv_grads(xp1, w1, da1, 2, False)
        db1 = da1.sum(axis=(0, 2, 3))
        state["t"] += 1
        t = state["t"]
        lr_t = np.float32(LR * np.sqrt(1 - B2**t) / (1 - B1**t))
        for p_, g, a, b in zip(params, (dw1, db1, dw2, db2, dw3, db3), m1, m2):
            a *= B1
            a += (1 - B1) * g
            b *= B2
            b += (1 - B2) * g * g
            p_ -= lr_t * a / (np.sqrt(b) + EPS)
        return loss

    return step


def torch_step():
    torch = require("torch")
    F = torch.nn.functional
    params = [torch.from_numpy(p.copy()).requires_grad_() for p in PARAMS]
    w1, b1, w2, b2, w3, b3 = params
    opt = torch.optim.Adam(params, lr=LR, betas=(B1, B2), eps=EPS)

    def step():
        x, lab = torch.from_numpy(X), torch.from_numpy(LABEL).reshape(-1)
        h = F.max_pool2d(torch.relu(F.conv2d(x, w1, b1, padding=2)), 2, 2)
        h = F.max_pool2d(torch.relu(F.conv2d(h, w2, b2, padding=2)), 2, 2)
        loss = F.cross_entropy(h.reshape(BATCH, -1) @ w3 + b3, lab)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach().numpy().reshape(1)

    return step


BENCHMARKS = [
    Benchmark(
        name="mnist_cnn",
        description=f"seed MNIST CNN (2x conv5x5+relu+maxpool2, fc 980->10 softmax) + cross_entropy, Adam, "
        f"batch {BATCH}",
        contenders={"oar": oar_step, "numpy": numpy_step, "torch": torch_step},
        targets={"oar/torch": 0.85},
        memory=True,
    )
]
