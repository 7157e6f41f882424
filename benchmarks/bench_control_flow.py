"""Per-iteration overhead of a ``While`` loop: 1000 scalar steps per ``exe.run``.

The loop body is what a counting loop needs: ``s = s + float(i)`` (cast, add, assign),
``i += 1`` and the condition update ``less_than(i, n, cond)``: 5 ops per iteration.
The numpy floor runs the same arithmetic on one-element arrays in a Python loop; the
``paddle`` contender (Fluid 1.8.5, when run under its interpreter) builds the same program
with ``use_program_cache=True``. A step is one ``exe.run`` of the whole loop, so µs/op
below is per loop-body op and a step / 1000 is the per-iteration time.
"""

from __future__ import annotations

import numpy as np
from benchlib import Benchmark, Unavailable, require

STEPS = 1000
WANT = float(STEPS * (STEPS - 1) // 2)


def _build(fluid):
    layers = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        i = layers.fill_constant([1], "int64", 0)
        n = layers.fill_constant([1], "int64", STEPS)
        s = layers.fill_constant([1], "float32", 0.0)
        c = layers.less_than(i, n)
        loop = layers.While(c)
        with loop.block():
            s2 = layers.elementwise_add(s, layers.cast(i, "float32"))
            layers.assign(s2, s)
            layers.increment(i, in_place=True)
            layers.less_than(i, n, cond=c)
    return main, startup, s


def oar_step():
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    main, startup, s = _build(fluid)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)

    def step():
        return exe.run(main, fetch_list=[s], scope=scope)[0]

    return step


def numpy_step():
    def step():
        i = np.zeros(1, np.int64)
        n = np.full(1, STEPS, np.int64)
        s = np.zeros(1, np.float32)
        c = i < n
        while c[0]:
            s = s + i.astype(np.float32)
            i = i + 1
            c = i < n
        return s

    return step


def paddle_step():
    fluid = require("paddle.fluid")
    main, startup, s = _build(fluid)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)

    def step():
        return exe.run(main, fetch_list=[s], scope=scope, use_program_cache=True)[0]

    return step


def _check(results: dict) -> None:
    for name, value in results.items():
        if float(np.asarray(value).reshape(-1)[0]) != WANT:
            raise AssertionError(f"while_loop: {name} computed {value}, expected {WANT}")


BENCHMARKS = [
    Benchmark(
        name="while_loop",
        description=f"a While loop of {STEPS} scalar steps (5 ops each) per exe.run",
        contenders={"oar": oar_step, "numpy": numpy_step, "paddle": paddle_step},
        ops_per_step=5 * STEPS,
        check=_check,
    )
]
