"""mul and its gradient at two threads equal their one-thread results bit for bit, and so does
an MLP's training: OpenBLAS's own threads round differently once the inner dimension passes
512 (128x784 @ 784x512: up to 6e-5), so products run at one BLAS thread, large ones in
fixed pieces on the kernel pool (``_gemm.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from oar import cpu_threads
from oar.api import registries, set_cpu_math_library_num_threads
from oar.cpu_threads import limit_cpu_math_threads


@pytest.fixture
def two_threads():
    setting, blas = cpu_threads._setting, cpu_threads.blas_num_threads()
    set_cpu_math_library_num_threads(2)
    yield
    cpu_threads._setting = setting
    if blas:
        cpu_threads._apply(blas)


def _one_thread(fn):
    with limit_cpu_math_threads(1):
        return fn()


@pytest.mark.parametrize("m", [32, 97, 128, 300])
@pytest.mark.parametrize("transposed", [False, True])
def test_mul_and_its_grad_equal_the_one_thread_product(two_threads, m, transposed):
    rng = np.random.default_rng(m)
    x = rng.standard_normal((m, 784), dtype=np.float32)  # K > 512: OpenBLAS's threads differ
    if transposed:  # a transposed view (the weight gradient's X.T), not a copy
        x = np.ascontiguousarray(x.T).T
    y = rng.standard_normal((784, 200), dtype=np.float32)
    d = rng.standard_normal((m, 200), dtype=np.float32)
    kernels = registries().kernels
    mul = kernels.lookup("mul", "cpu", "float32").kernel
    grad = kernels.lookup("mul_grad", "cpu", "float32").kernel
    attrs = {"x_num_col_dims": 1, "y_num_col_dims": 1}

    def run():
        out = mul({"X": x, "Y": y}, attrs)["Out"]
        g = grad({"X": x, "Y": y, "Out@GRAD": d}, attrs, frozenset({"X@GRAD", "Y@GRAD"}))
        return out, g["X@GRAD"], g["Y@GRAD"]

    split, single = run(), _one_thread(run)
    for a, b in zip(split, single):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(split[0], x @ y, rtol=1e-5, atol=1e-4)


SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "mlp_at_threads.py"


def mlp_at_threads(counts, env_extra, *args):
    """``tests/scripts/mlp_at_threads.py args`` under each OMP_NUM_THREADS: its JSON lines."""
    runs = []
    for n in counts:
        env = dict(os.environ, OMP_NUM_THREADS=n, **env_extra)
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
    """Three Adam steps of a 784-512-512-10 MLP: the same losses and weights, bit for bit,
    with OMP_NUM_THREADS=1 and 2 (OpenBLAS's own two threads give other last bits for the
    784-deep first layer)."""
    one, two = mlp_at_threads(("1", "2"), {}, "784", "relu")
    assert one[:2] == two[:2]
