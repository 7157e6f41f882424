"""Large products run whichever way (OpenBLAS's threads or pieces on the pool) has been faster
for their shapes lately (``_gemm_route.py``): the choice follows the machine's load, tries the
slower way again on a backing-off schedule, and can be fixed by the user."""

from __future__ import annotations

import time

import numpy as np
import pytest
from oar import cpu_threads, fluid
from oar_kernels_cpu.kernels import _gemm, _gemm_route, _parallel
from oar_kernels_cpu.kernels._gemm_route import OPENBLAS, POOL, PROBE_MAX, PROBE_MIN, Route


def _run(route, seconds_of, calls):
    """``calls`` picks on ``route``, each way taking ``seconds_of[way]`` for 1e6 MACs."""
    ways = []
    for _ in range(calls):
        way = route.pick()
        route.record(way, seconds_of[way], 10**6)
        ways.append(way)
    return ways


def test_each_way_is_measured_once_then_the_faster_one_runs():
    ways = _run(Route(), {OPENBLAS: 2.0, POOL: 1.0}, 3 + PROBE_MIN)
    assert ways[:3] == [OPENBLAS, OPENBLAS, POOL]  # the first call warms up, uncounted
    assert ways[3:] == [POOL] * PROBE_MIN


def test_one_slow_call_does_not_switch_ways():
    route = Route()
    _run(route, {OPENBLAS: 1.0, POOL: 1.5}, 10)
    route.record(OPENBLAS, 50.0, 10**6)  # preempted once
    assert route.best == OPENBLAS and route.cost[OPENBLAS] < 1.5


def test_the_slower_way_is_tried_again_less_often_while_it_keeps_losing():
    ways = _run(Route(), {OPENBLAS: 1.0, POOL: 3.0}, 2000)
    probes = [i for i, way in enumerate(ways) if way == POOL][1:]  # after the first measurement
    gaps = np.diff(probes) - 1  # calls of the faster way between two tries
    assert gaps[0] == 2 * PROBE_MIN and gaps[-1] == PROBE_MAX
    assert list(gaps) == sorted(gaps)


def test_the_choice_follows_the_load_both_ways():
    route = Route()
    quiet, busy = {OPENBLAS: 1.0, POOL: 1.5}, {OPENBLAS: 10.0, POOL: 2.0}
    _run(route, quiet, 50)
    assert route.best == OPENBLAS
    _run(route, busy, 3)  # OpenBLAS's threads slow down: its running cost passes the pool's
    assert route.best == POOL
    assert _run(route, busy, PROBE_MIN)[-PROBE_MIN + 1 :] == [POOL] * (PROBE_MIN - 1)
    ways = _run(route, quiet, 4 * PROBE_MAX)  # quiet again: the next try of OpenBLAS wins
    assert route.best == OPENBLAS and ways[-PROBE_MIN:] == [OPENBLAS] * PROBE_MIN


@pytest.fixture
def fresh_routes(monkeypatch, two_threads):
    monkeypatch.setattr(_gemm_route, "_routes", {})
    monkeypatch.setattr(_parallel, "parallel_threads", lambda: 2)


class _SlowAt:
    """numpy whose matmul sleeps while OpenBLAS has ``threads`` threads (a machine on which
    that way is slow); records the BLAS thread count of each large call."""

    def __init__(self, threads):
        self.threads, self.calls = threads, []

    def __getattr__(self, name):
        return getattr(np, name)

    def matmul(self, a, b, out=None):
        blas = cpu_threads.blas_num_threads()
        self.calls.append(blas)
        if blas == self.threads:  # far longer than a busy machine stalls OpenBLAS (~20 ms)
            time.sleep(0.5)
        return np.matmul(a, b, out=out)


@pytest.mark.parametrize("slow_threads, expected", [(2, 1), (1, 2)])
def test_matmuls_move_large_products_to_the_faster_way(fresh_routes, slow_threads, expected):
    if cpu_threads.blas_num_threads() is None:
        pytest.skip("numpy's OpenBLAS was not found")
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((128, 784), np.float32), rng.standard_normal((784, 200), np.float32)
    assert x.shape[0] * x.shape[1] * y.shape[1] >= _gemm.THREADED_MACS
    fake = _SlowAt(slow_threads)
    for _ in range(6):
        out = _gemm.matmul(fake, x, y)
        np.testing.assert_allclose(out, x @ y, rtol=1e-5, atol=1e-4)
    fake.calls.clear()
    _gemm.matmul(fake, x, y)
    assert set(fake.calls) == {expected}


def test_the_user_can_fix_the_way(fresh_routes, monkeypatch):
    if cpu_threads.blas_num_threads() is None:
        pytest.skip("numpy's OpenBLAS was not found")
    monkeypatch.setattr(_gemm_route, "FIXED", POOL)
    x, y = np.ones((128, 784), np.float32), np.ones((784, 200), np.float32)
    fake = _SlowAt(1)  # the pool is slow here, yet fixed
    for _ in range(2):
        _gemm.matmul(fake, x, y)
    assert set(fake.calls) == {1} and not _gemm_route._routes


def test_deterministic_flag_bypasses_the_choice(fresh_routes):
    x, y = np.ones((128, 784), np.float32), np.ones((784, 200), np.float32)
    fluid.set_flags({"FLAGS_cpu_deterministic": True})
    try:
        _gemm.matmul(np, x, y)
    finally:
        fluid.set_flags({"FLAGS_cpu_deterministic": False})
    assert not _gemm_route._routes


def test_a_bad_setting_is_refused_naming_the_variable(monkeypatch):
    import importlib

    monkeypatch.setenv("OAR_BLAS_LARGE_PRODUCTS", "both")
    with pytest.raises(ValueError, match="OAR_BLAS_LARGE_PRODUCTS.*'both'"):
        importlib.reload(_gemm_route)
    monkeypatch.delenv("OAR_BLAS_LARGE_PRODUCTS")
    importlib.reload(_gemm_route)
