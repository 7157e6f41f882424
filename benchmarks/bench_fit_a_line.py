"""The seed's fit_a_line train step: fc 13 -> 1, square_error_cost, mean, SGD, batch 20.

One step = forward, backward and the SGD update, fetching the loss, as the
seed's training loop does with ``exe.run(feed=..., fetch_list=[avg_cost])``.
"""

from __future__ import annotations

import numpy as np
from benchlib import Benchmark, Unavailable, require

BATCH, IN = 20, 13
LR = 0.001
_rng = np.random.default_rng(0)
X = _rng.uniform(-1, 1, (BATCH, IN)).astype(np.float32)
Y = (X @ _rng.uniform(-2, 2, (IN, 1)) + 0.5).astype(np.float32)
W0 = _rng.uniform(-0.5, 0.5, (IN, 1)).astype(np.float32)
B0 = np.full(1, 0.1, dtype=np.float32)


def oar_step():
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    init = fluid.initializer.NumpyArrayInitializer
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[IN], dtype="float32")
        y = fluid.layers.data(name="y", shape=[1], dtype="float32")
        y_predict = fluid.layers.fc(
            input=x,
            size=1,
            act=None,
            param_attr=fluid.ParamAttr(initializer=init(W0)),
            bias_attr=fluid.ParamAttr(initializer=init(B0)),
        )
        cost = fluid.layers.square_error_cost(input=y_predict, label=y)
        avg_cost = fluid.layers.mean(cost)
        fluid.optimizer.SGD(learning_rate=LR).minimize(avg_cost, startup)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": X, "y": Y}
    fetch = [avg_cost]

    def step():
        return exe.run(main, feed=feed, fetch_list=fetch, scope=scope)[0]

    return step


def numpy_step():
    """The same computation by hand: forward, analytic backward, in-place SGD."""
    w, b = W0.copy(), B0.copy()
    lr = np.float32(LR)
    scale = np.float32(2.0 / BATCH)

    def step():
        diff = X @ w
        diff += b
        diff -= Y
        loss = np.mean(diff * diff, dtype=np.float32).reshape(1)
        diff *= scale  # d loss / d pred
        dw = X.T @ diff
        dw *= lr
        np.subtract(w, dw, out=w)
        np.subtract(b, lr * diff.sum(axis=0), out=b)
        return loss

    return step


def torch_step():
    torch = require("torch")
    w = torch.from_numpy(W0.copy()).requires_grad_()
    b = torch.from_numpy(B0.copy()).requires_grad_()
    opt = torch.optim.SGD([w, b], lr=LR)

    def step():
        x, y = torch.from_numpy(X), torch.from_numpy(Y)
        loss = ((x @ w + b - y) ** 2).mean()
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
        x = fluid.layers.data(name="x", shape=[IN], dtype="float32")
        y = fluid.layers.data(name="y", shape=[1], dtype="float32")
        y_predict = fluid.layers.fc(
            input=x,
            size=1,
            act=None,
            param_attr=fluid.ParamAttr(initializer=init(W0)),
            bias_attr=fluid.ParamAttr(initializer=init(B0)),
        )
        avg_cost = fluid.layers.mean(fluid.layers.square_error_cost(input=y_predict, label=y))
        fluid.optimizer.SGD(learning_rate=LR).minimize(avg_cost, startup)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": X, "y": Y}

    def step():
        return exe.run(main, feed=feed, fetch_list=[avg_cost], scope=scope, use_program_cache=True)[
            0
        ]

    return step


BENCHMARKS = [
    Benchmark(
        name="fit_a_line",
        description=f"seed fit_a_line train step: fc {IN}->1, square_error_cost, mean, SGD, batch {BATCH}",
        contenders={
            "oar": oar_step,
            "numpy": numpy_step,
            "torch": torch_step,
            "paddle": paddle_step,
        },
        targets={"oar_us": 130.0},
    )
]
