"""Per-op dispatch overhead: 200 chained elementwise_add on a [4] float32 tensor.

The arrays are tiny, so the time is almost all framework overhead around each
kernel call; oar's step is one ``Executor.run`` (feed, 200 ops, fetch).
"""

from __future__ import annotations

import numpy as np
from benchlib import Benchmark, Unavailable, require

N_OPS = 200
X = np.arange(4, dtype=np.float32)
Y = np.full(4, 0.5, dtype=np.float32)


def oar_step():
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [4], append_batch_size=False, dtype="float32")
        y = fluid.layers.data("y", [4], append_batch_size=False, dtype="float32")
        h = x
        for _ in range(N_OPS):
            h = fluid.layers.elementwise_add(h, y)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    feed = {"x": X, "y": Y}
    fetch = [h]

    def step():
        return exe.run(main, feed=feed, fetch_list=fetch, scope=scope)[0]

    return step


def numpy_step():
    add = np.add

    def step():
        h = X
        for _ in range(N_OPS):
            h = add(h, Y)
        return h

    return step


def torch_step():
    torch = require("torch")
    x, y = torch.from_numpy(X.copy()), torch.from_numpy(Y.copy())
    add = torch.add

    def step():
        h = x
        for _ in range(N_OPS):
            h = add(h, y)
        return h

    return step


def paddle_step():
    fluid = require("paddle.fluid")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [4], append_batch_size=False, dtype="float32")
        y = fluid.layers.data("y", [4], append_batch_size=False, dtype="float32")
        h = x
        for _ in range(N_OPS):
            h = fluid.layers.elementwise_add(h, y)
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {"x": X, "y": Y}

    def step():
        return exe.run(main, feed=feed, fetch_list=[h], use_program_cache=True)[0]

    return step


BENCHMARKS = [
    Benchmark(
        name="dispatch",
        description=f"{N_OPS} chained elementwise_add on a [4] float32 tensor (per-op overhead)",
        contenders={
            "oar": oar_step,
            "numpy": numpy_step,
            "torch": torch_step,
            "paddle": paddle_step,
        },
        ops_per_step=N_OPS,
        targets={"oar_us_per_op": 3.0},
    )
]
