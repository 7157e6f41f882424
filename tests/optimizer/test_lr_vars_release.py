"""An optimizer used on many fresh programs holds none of them alive (bounded
memory in long-lived processes)."""

import gc
import weakref

import numpy as np
from oar import fluid


def _minimize_fresh(opt):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 3], "float32")
        loss = fluid.layers.mean(fluid.layers.fc(x, 1))
        opt.minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    exe.run(main, feed={"x": np.ones((2, 3), "float32")}, fetch_list=[loss], scope=scope)
    return weakref.ref(main)


def test_one_optimizer_on_many_programs_keeps_none_alive():
    opt = fluid.optimizer.SGD(learning_rate=0.1)
    refs = [_minimize_fresh(opt) for _ in range(50)]
    gc.collect()
    assert sum(r() is not None for r in refs) == 0
    assert len(opt._lr_vars) == 0


def test_the_lr_variable_is_found_per_program():
    opt = fluid.optimizer.Adam(learning_rate=0.01)
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 3], "float32")
        opt.minimize(fluid.layers.mean(fluid.layers.fc(x, 1)))
        lr = opt._global_learning_rate()
    assert lr is not None and lr.block.program is main
    assert opt._global_learning_rate(fluid.Program()) is None
