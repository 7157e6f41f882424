"""``fluid.install_check.run_check()``: train a tiny model to show the installation works."""

from __future__ import annotations

import numpy as np

__all__ = ["run_check"]


def _static_step(fluid, places: list | None) -> float:
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 1
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.data(name="inp", shape=[None, 2], dtype="float32")
        out = fluid.layers.fc(x, size=3)
        loss = fluid.layers.reduce_sum(out)
        fluid.optimizer.SGD(learning_rate=0.01).minimize(loss)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        exe.run(startup)
        program = main
        feed_rows = 2
        if places is not None:
            program = fluid.CompiledProgram(main).with_data_parallel(
                loss_name=loss.name, places=places
            )
            feed_rows = 2 * len(places)
        feed = {"inp": np.ones((feed_rows, 2), dtype="float32")}
        (value,) = exe.run(program, feed=feed, fetch_list=[loss])
    return float(np.asarray(value).sum())


def _dygraph_step(fluid) -> float:
    with fluid.dygraph.guard(fluid.CPUPlace()):
        linear = fluid.dygraph.Linear(2, 3)
        x = fluid.dygraph.to_variable(np.ones((2, 2), dtype="float32"))
        loss = fluid.layers.reduce_sum(linear(x))
        loss.backward()
        opt = fluid.optimizer.SGD(learning_rate=0.01, parameter_list=linear.parameters())
        opt.minimize(loss)
        return float(loss.numpy().sum())


def run_check() -> None:
    """Run a static step on one CPU place, a data-parallel step on two, and a dygraph step.

    Prints what Fluid prints on success; raises whatever fails (with its own message).
    """
    from oar import fluid

    print("Running Verify Fluid Program ... ")
    for value in (_static_step(fluid, None), _dygraph_step(fluid)):
        if not np.isfinite(value):
            raise RuntimeError(f"install check: the loss is not finite ({value})")
    print("Your Paddle Fluid works well on SINGLE GPU or CPU.")
    if not np.isfinite(_static_step(fluid, fluid.cpu_places(2))):
        raise RuntimeError("install check: the data-parallel loss is not finite")
    print("Your Paddle Fluid works well on MUTIPLE GPU or CPU.")
    print(
        "Your Paddle Fluid is installed successfully! "
        "Let's start deep Learning with Paddle Fluid now"
    )
