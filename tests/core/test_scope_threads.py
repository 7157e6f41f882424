"""scope_guard is per thread: threads training side by side keep their own parameters."""

from __future__ import annotations

import threading

import numpy as np
from oar import fluid
from oar.scope import global_scope


def _build():
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 7
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[4], dtype="float32")
        y = fluid.layers.data("y", shape=[1], dtype="float32")
        pred = fluid.layers.fc(x, 1)
        loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, y))
        fluid.optimizer.SGD(0.05).minimize(loss)
    return main, startup, loss


def _train(main, startup, loss, seed: int, steps: int = 60, barrier=None) -> list:
    """Train in ``scope_guard(Scope())``; every name is the same in every thread's program."""
    rng = np.random.default_rng(seed)
    w_true = rng.standard_normal((4, 1)).astype("float32")
    exe = fluid.Executor(fluid.CPUPlace())
    losses = []
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        for _ in range(steps):
            xs = rng.standard_normal((8, 4)).astype("float32")
            if barrier is not None:
                barrier.wait(timeout=30)  # interleave the threads' steps
            (got,) = exe.run(main, feed={"x": xs, "y": xs @ w_true}, fetch_list=[loss])
            losses.append(got.item())
    return losses


def test_two_threads_with_scope_guard_get_their_single_threaded_results():
    nets = [_build(), _build()]  # same parameter names: only the scopes keep them apart
    alone = [_train(*nets[i], seed=i) for i in range(2)]
    assert alone[0] != alone[1]
    results: dict = {}
    barrier = threading.Barrier(2)

    def work(i):
        results[i] = _train(*nets[i], seed=i, barrier=barrier)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert results[0] == alone[0] and results[1] == alone[1]


def test_the_process_wide_default_is_shared_and_unchanged_outside_guards():
    default = global_scope()
    seen = {}
    mine = fluid.Scope()
    with fluid.scope_guard(mine):
        assert global_scope() is mine
        t = threading.Thread(target=lambda: seen.update(other=global_scope()))
        t.start()
        t.join(10)
    assert seen["other"] is default  # another thread is not inside this thread's guard
    assert global_scope() is default
    with fluid.scope_guard(mine):
        with fluid.scope_guard(fluid.Scope()):
            pass
        assert global_scope() is mine  # nested guards restore the outer one
