"""Large products at OpenBLAS's full thread count by default, small ones at one thread; under
``FLAGS_cpu_deterministic`` mul and its gradient at 2 and 3 threads equal their one-thread
results bit for bit, and so does an MLP's training: OpenBLAS's own threads round differently
once the inner dimension passes 512 (128x784 @ 784x512: up to 6e-5), so the flag runs products
at one BLAS thread, large ones in fixed pieces on the kernel pool (``_gemm.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from oar import cpu_threads, fluid
from oar.api import registries
from oar.cpu_threads import limit_cpu_math_threads
from oar_kernels_cpu.kernels import _gemm, _gemm_route, _parallel


@pytest.fixture
def deterministic():
    fluid.set_flags({"FLAGS_cpu_deterministic": True})
    yield
    fluid.set_flags({"FLAGS_cpu_deterministic": False})


def _one_thread(fn):
    with limit_cpu_math_threads(1):
        return fn()


def _mul_and_grad(x, y, d):
    kernels = registries().kernels
    mul = kernels.lookup("mul", "cpu", "float32").kernel
    grad = kernels.lookup("mul_grad", "cpu", "float32").kernel
    attrs = {"x_num_col_dims": 1, "y_num_col_dims": 1}
    out = mul({"X": x, "Y": y}, attrs)["Out"]
    g = grad({"X": x, "Y": y, "Out@GRAD": d}, attrs, frozenset({"X@GRAD", "Y@GRAD"}))
    return out, g["X@GRAD"], g["Y@GRAD"]


def _operands(m, transposed=False):
    rng = np.random.default_rng(m)
    x = rng.standard_normal((m, 784), dtype=np.float32)  # K > 512: OpenBLAS's threads differ
    if transposed:  # a transposed view (the weight gradient's X.T), not a copy
        x = np.ascontiguousarray(x.T).T
    y = rng.standard_normal((784, 200), dtype=np.float32)
    d = rng.standard_normal((m, 200), dtype=np.float32)
    return x, y, d


@pytest.mark.parametrize("m", [32, 97, 128, 300])
@pytest.mark.parametrize("transposed", [False, True])
def test_mul_and_its_grad_equal_the_one_thread_product(two_threads, deterministic, m, transposed):
    x, y, d = _operands(m, transposed)

    def run():
        return _mul_and_grad(x, y, d)

    split, single = run(), _one_thread(run)
    for a, b in zip(split, single):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(split[0], x @ y, rtol=1e-5, atol=1e-4)


def test_deterministic_results_equal_at_one_two_and_three_threads(deterministic, monkeypatch):
    x, y, d = _operands(300)
    runs = []
    for n in (1, 2, 3):
        monkeypatch.setattr(_parallel, "parallel_threads", lambda n=n: n)
        runs.append(_mul_and_grad(x, y, d))
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            np.testing.assert_array_equal(a, b)


class _Recorder:
    """numpy, its matmul calls recorded as ``(macs, BLAS threads during the call)``."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        return getattr(np, name)

    def matmul(self, a, b, out=None):
        self.calls.append((a.shape[0] * a.shape[1] * b.shape[1], cpu_threads.blas_num_threads()))
        return np.matmul(a, b, out=out)


@pytest.mark.parametrize("flag", [False, True])
def test_large_products_run_at_the_full_blas_thread_count(two_threads, monkeypatch, flag):
    """By default a product of at least THREADED_MACS multiply-adds is one call at OpenBLAS's
    thread count (2 here), smaller ones at one thread; with FLAGS_cpu_deterministic, the large
    one is cut into pieces on the pool, each at one BLAS thread."""
    if cpu_threads.blas_num_threads() is None:
        pytest.skip("numpy's OpenBLAS was not found")
    fluid.set_flags({"FLAGS_cpu_deterministic": flag})
    monkeypatch.setattr(_parallel, "parallel_threads", lambda: 2)
    monkeypatch.setattr(_gemm_route, "FIXED", _gemm_route.OPENBLAS)  # not chosen by time
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((128, 784), np.float32), rng.standard_normal((784, 200), np.float32)
    big, small = (x, y), (x[:, :64], y[:64, :64])  # 20M and 0.5M multiply-adds
    assert 128 * 784 * 200 >= max(_gemm.THREADED_MACS, 2 * _gemm.PIECE_MACS)
    assert 128 * 64 * 64 < _gemm.THREADED_MACS
    rec = _Recorder()
    try:
        out = _gemm.matmuls(rec, [big, small])
    finally:
        fluid.set_flags({"FLAGS_cpu_deterministic": False})
    np.testing.assert_allclose(out[0], big[0] @ big[1], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(out[1], small[0] @ small[1], rtol=1e-5, atol=1e-5)
    large = [threads for macs, threads in rec.calls if macs > 128 * 64 * 64]
    assert [threads for macs, threads in rec.calls if macs == 128 * 64 * 64] == [1]
    if flag:  # pieces of the large product on the pool, at one BLAS thread
        assert len(large) >= 2 and set(large) == {1}
    else:
        assert large == [2]
    assert cpu_threads.blas_num_threads() == 2  # as it was


def test_large_products_off_the_main_thread_keep_the_blas_count(two_threads):
    """A data-parallel place (another thread, inside its limit) leaves OpenBLAS's count alone."""
    import threading

    if cpu_threads.blas_num_threads() is None:
        pytest.skip("numpy's OpenBLAS was not found")
    x, y, _ = _operands(300)
    rec, box = _Recorder(), []
    with limit_cpu_math_threads(1):
        t = threading.Thread(target=lambda: box.append(_gemm.matmul(rec, x, y)))
        t.start()
        t.join(timeout=60)
    assert rec.calls == [(300 * 784 * 200, 1)]
    np.testing.assert_allclose(box[0], x @ y, rtol=1e-5, atol=1e-4)


def test_default_results_close_to_the_deterministic_ones(two_threads, monkeypatch):
    x, y, d = _operands(300)
    monkeypatch.setattr(_parallel, "parallel_threads", lambda: 2)
    default = _mul_and_grad(x, y, d)
    fluid.set_flags({"FLAGS_cpu_deterministic": True})
    try:
        det = _mul_and_grad(x, y, d)
    finally:
        fluid.set_flags({"FLAGS_cpu_deterministic": False})
    for a, b in zip(default, det):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3)


SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "mlp_at_threads.py"


def mlp_at_threads(counts, env_extra, *args):
    """``tests/scripts/mlp_at_threads.py args`` under each OMP_NUM_THREADS: its JSON lines."""
    runs = []
    for n in counts:
        env = dict(os.environ, OMP_NUM_THREADS=n, FLAGS_cpu_deterministic="1", **env_extra)
        res = subprocess.run(
            [sys.executable, str(SCRIPT), *args],
            capture_output=True,
            text=True,
            timeout=180,
            env=env,
        )
        assert res.returncode == 0, res.stderr[-3000:]
        runs.append(json.loads(res.stdout.strip().splitlines()[-1]))
    return runs


def test_mlp_training_equal_at_one_and_two_threads():
    """Three Adam steps of a 784-512-512-10 MLP under FLAGS_cpu_deterministic: the same losses
    and weights, bit for bit, with OMP_NUM_THREADS=1 and 2 (OpenBLAS's own two threads give
    other last bits for the 784-deep first layer)."""
    one, two = mlp_at_threads(("1", "2"), {}, "784", "relu")
    assert one[:2] == two[:2]
