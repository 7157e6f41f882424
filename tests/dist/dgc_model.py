"""The DGC model, data and numpy reference shared by the in-process and the MPI DGC tests."""

from __future__ import annotations

import numpy as np
from oar import fluid

LR, MU = 0.1, 0.9
W0 = np.random.RandomState(3).uniform(-1, 1, (6, 4)).astype("float32")


def build(num_trainers: int, begin: int, wrap=lambda opt: opt):
    """A bias-free fc regression trained by DGCMomentumOptimizer (top 25% sent); ``wrap``
    wraps the optimizer (fleet.distributed_optimizer)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 6], "float32")
        y = fluid.data("y", [None, 4], "float32")
        pred = fluid.layers.fc(
            x,
            4,
            param_attr=fluid.ParamAttr(
                "w", initializer=fluid.initializer.NumpyArrayInitializer(W0)
            ),
            bias_attr=False,
        )
        loss = fluid.layers.mean(fluid.layers.square(pred - y))
        opt = fluid.optimizer.DGCMomentumOptimizer(
            LR, MU, rampup_begin_step=begin, sparsity=[0.75], num_trainers=num_trainers
        )
        wrap(opt).minimize(loss)
    return main, startup, loss


def batches(steps: int = 4):
    """Global batches of 8 rows; rank r of 2 takes rows 4r..4r+3."""
    rng = np.random.RandomState(0)
    return [
        (rng.rand(8, 6).astype("float32"), rng.rand(8, 4).astype("float32")) for _ in range(steps)
    ]


def _grad(x, y, w):
    """d mean((xw - y)^2) / dw."""
    return 2 * x.T @ (x @ w - y) / y.size


def reference(batches, begin, ranks=2):
    """Ranks start from the same u; before the ramp-up the mean gradient drives momentum,
    afterwards each rank sends the top 25% of |v| and the sum of what was sent is applied."""
    w = W0.astype("float64")
    u = [np.zeros_like(w) for _ in range(ranks)]
    v = [np.zeros_like(w) for _ in range(ranks)]
    k = w.size // 4
    for step, (x, y) in enumerate(batches):
        parts = np.split(x, ranks), np.split(y, ranks)
        g = [_grad(a, b, w) / ranks for a, b in zip(*parts)]  # the loss gradient is 1/ranks
        if step < begin:
            for r in range(ranks):
                u[r] = MU * u[r] + sum(g)
            w = w - LR * u[0]
            continue
        total = np.zeros_like(w)
        for r in range(ranks):
            u[r] = MU * u[r] + g[r]
            v[r] = v[r] + u[r]
            top = np.argsort(-np.abs(v[r]).ravel(), kind="stable")[:k]
            sent = np.zeros(w.size)
            sent[top] = v[r].ravel()[top]
            total += sent.reshape(w.shape)
            v[r].ravel()[top] = 0
            u[r].ravel()[top] = 0
        w = w - LR * total
    return w
