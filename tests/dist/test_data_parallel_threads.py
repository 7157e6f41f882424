"""No oversubscription: places of the data-parallel executor get cores // places math threads."""

from __future__ import annotations

import os

import numpy as np
import pytest
from oar import fluid
from oar.api import cpu_math_library_num_threads, registries
from oar.testing import scoped_registry

pytest.importorskip("oar_dist")


def test_each_place_runs_with_its_share_of_the_cores():
    seen = []
    with scoped_registry() as reg:
        below = reg.kernels.lookup("square", "cpu", "float32")

        def square(inputs, attrs, **kw):
            seen.append(cpu_math_library_num_threads())
            return below.kernel(inputs, attrs, **kw)

        reg.kernels.register_kernel(
            "square", "cpu", ("float32",), square, priority=900, inplace=below.inplace
        )
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup):
            x = fluid.layers.data("x", [3])
            loss = fluid.layers.mean(fluid.layers.square(fluid.layers.fc(x, 2)))
            fluid.optimizer.SGD(0.1).minimize(loss)
        scope = fluid.Scope()
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup, scope=scope)
        before = cpu_math_library_num_threads()
        compiled = fluid.CompiledProgram(main).with_data_parallel(
            loss_name=loss.name, places=fluid.cpu_places(2)
        )
        feed = {"x": np.ones((4, 3), "float32")}
        exe.run(compiled, feed=feed, fetch_list=[loss], scope=scope)
        assert registries().kernels.lookup("square", "cpu", "float32").kernel is square
    assert len(seen) == 2  # one per place
    assert seen == [max(1, min(before, (os.cpu_count() or 1) // 2))] * 2
    assert cpu_math_library_num_threads() == before  # restored after the run
