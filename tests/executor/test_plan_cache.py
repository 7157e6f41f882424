"""The Executor's plan cache: bounded (LRU), owned by the programs, released with them."""

from __future__ import annotations

import gc
import os
import tracemalloc
import weakref

import numpy as np
import pytest
from oar import fluid
from oar.executor.plan_cache import PlanCache

X = np.ones((4, 8), "float32")


def _net():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[8], dtype="float32")
        loss = fluid.layers.mean(fluid.layers.fc(x, 4, param_attr=fluid.initializer.Constant(0.5)))
    return main, startup, loss


def _run_fresh(exe, scope):
    main, startup, loss = _net()
    exe.run(startup, scope=scope)
    return exe.run(main, feed={"x": X}, fetch_list=[loss], scope=scope)[0]


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_two_thousand_fresh_programs_keep_memory_flat():
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    for _ in range(20):  # warm up lazily built state (kernels, imports)
        _run_fresh(exe, scope)
    gc.collect()
    rss0 = _rss_mb() if os.path.exists("/proc/self/statm") else None
    max_len = 0
    for i in range(1600):
        _run_fresh(exe, scope)
        if i % 100 == 0:
            max_len = max(max_len, len(exe._plans), len(exe._fast))
    gc.collect()
    tracemalloc.start()  # the last 400 traced (tracing the whole soak would triple its time)
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(400):
            got = _run_fresh(exe, scope)
        np.testing.assert_allclose(got, [4.0])  # 8 inputs of 1 x weight 0.5, no bias
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    # before: 4,002 cached plans and +160 MB; programs now take their plans with them
    assert len(exe._plans) == 0 and len(exe._fast) == 0
    assert max_len <= exe._plans.maxsize
    # (before: the 400 programs' plans alone held ~30 MB)
    assert grown < 2**20, f"traced memory grew by {grown / 2**20:.2f} MB over 400 programs"
    if rss0 is not None:
        assert _rss_mb() - rss0 < 40, "RSS grew by more than 40 MB over 2,000 programs"


def test_the_cache_is_bounded_lru_and_rebuilds_evicted_plans():
    exe = fluid.Executor(fluid.CPUPlace(), plan_cache_size=4)
    scope = fluid.Scope()
    nets = [_net() for _ in range(10)]  # all alive: only the bound limits the cache
    for main, startup, loss in nets:
        exe.run(startup, scope=scope)
        exe.run(main, feed={"x": X}, fetch_list=[loss], scope=scope)
    assert len(exe._plans) == 4 and exe._plans.evictions == 16
    first_main, _, first_loss = nets[0]
    assert not any(k[0] == id(first_main) for k in exe._plans)  # least recently used: gone
    last_main, _, last_loss = nets[-1]
    kept = exe._plans[(id(last_main), ("x",), (last_loss.name,))][1]
    # an evicted program runs again (its plan rebuilt); a kept one reuses its plan
    got = exe.run(first_main, feed={"x": X}, fetch_list=[first_loss], scope=scope)[0]
    np.testing.assert_allclose(got, [4.0])
    exe.run(last_main, feed={"x": X}, fetch_list=[last_loss], scope=scope)
    assert exe._plans[(id(last_main), ("x",), (last_loss.name,))][1] is kept
    assert len(exe._plans) == 4


def test_a_dropped_program_releases_its_plans_and_an_executor_its_entries():
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    main, startup, loss = _net()
    exe.run(startup, scope=scope)
    exe.run(main, feed={"x": X}, fetch_list=[loss], scope=scope)
    plan = exe._plans[(id(main), ("x",), (loss.name,))][1]
    plan_ref, prog_ref = weakref.ref(plan), weakref.ref(main)
    del main, startup, loss, plan
    gc.collect()
    assert prog_ref() is None and plan_ref() is None
    assert len(exe._plans) == 0
    # a dropped executor removes what it stored on programs that live on
    main, startup, loss = _net()
    exe2 = fluid.Executor(fluid.CPUPlace())
    exe2.run(startup, scope=scope)
    exe2.run(main, feed={"x": X}, fetch_list=[loss], scope=scope)
    plan_ref = weakref.ref(exe2._plans[(id(main), ("x",), (loss.name,))][1])
    del exe2
    gc.collect()
    assert plan_ref() is None


def test_cache_size_is_checked():
    with pytest.raises(ValueError, match="positive int"):
        PlanCache(0)
    with pytest.raises(ValueError, match="positive int"):
        fluid.Executor(fluid.CPUPlace(), plan_cache_size=-3)


def test_copied_programs_do_not_carry_plans():
    import copy

    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    main, startup, loss = _net()
    exe.run(startup, scope=scope)
    exe.run(main, feed={"x": X}, fetch_list=[loss], scope=scope)
    twin = copy.deepcopy(main)
    assert not twin.__dict__.get("_oar_plan_store")
    got = exe.run(twin, feed={"x": X}, fetch_list=[loss.name], scope=scope)[0]
    np.testing.assert_allclose(got, [4.0])
