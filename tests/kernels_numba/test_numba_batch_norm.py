"""oar-kernels-numba's batch_norm (training, inference) and its gradient against numpy's."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("oar_kernels_numba")
from oar_kernels_numba.compat import unavailable_reason

if unavailable_reason() is not None:
    pytest.skip(f"numba unavailable: {unavailable_reason()}", allow_module_level=True)

from oar.api import limit_cpu_math_threads

rng = np.random.default_rng(31)
TOL = {"float32": dict(rtol=2e-5, atol=2e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def _inputs(shape, layout, dtype):
    c = shape[1] if layout == "NCHW" else shape[-1]
    return {
        "X": (rng.standard_normal(shape) * 2 + 0.5).astype(dtype),
        "Scale": rng.standard_normal(c).astype(dtype),
        "Bias": rng.standard_normal(c).astype(dtype),
        "Mean": rng.standard_normal(c).astype(dtype),
        "Variance": rng.random(c).astype(dtype) + 0.5,
    }


def _copy(d):
    return {k: v.copy() for k, v in d.items()}


CASES = [
    ((8, 6, 10, 10), "NCHW"),
    ((4, 9, 9, 40), "NHWC"),
    ((300, 20), "NCHW"),
    ((6, 16, 32, 32), "NCHW"),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["train", "test", "global"])
@pytest.mark.parametrize("shape,layout", CASES)
def test_batch_norm_and_grad(shape, layout, mode, dtype, numba_pair):
    mine, numpy_k = numba_pair("batch_norm", dtype)
    gmine, gnumpy = numba_pair("batch_norm_grad", dtype)
    attrs = {
        "momentum": 0.9,
        "epsilon": 1e-5,
        "is_test": mode == "test",
        "data_layout": layout,
        "use_global_stats": mode == "global",
        "trainable_statistics": False,
    }
    ins = _inputs(shape, layout, dtype)
    got, want = mine(_copy(ins), attrs), numpy_k(_copy(ins), attrs)
    assert got.keys() == want.keys()
    for k in want:
        assert got[k].dtype == want[k].dtype, k
        np.testing.assert_allclose(got[k], want[k], **TOL[dtype], err_msg=k)
    gins = dict(ins, SavedMean=want["SavedMean"], SavedVariance=want["SavedVariance"])
    gins["Y@GRAD"] = rng.standard_normal(shape).astype(dtype)
    for wanted in ({"X@GRAD", "Scale@GRAD", "Bias@GRAD"}, {"Scale@GRAD", "Bias@GRAD"}):
        got = gmine(dict(gins), attrs, frozenset(wanted))
        want = gnumpy(dict(gins), attrs, frozenset(wanted))
        assert got.keys() == want.keys()
        for k in want:
            np.testing.assert_allclose(got[k], want[k], **TOL[dtype], err_msg=k)


def test_batch_norm_statistics_do_not_depend_on_the_thread_count(numba_pair):
    mine, _ = numba_pair("batch_norm", "float32")
    attrs = {
        "momentum": 0.9,
        "epsilon": 1e-5,
        "is_test": False,
        "data_layout": "NCHW",
        "use_global_stats": False,
        "trainable_statistics": False,
    }
    ins = _inputs((16, 8, 32, 32), "NCHW", "float32")
    with limit_cpu_math_threads(1):
        one = mine(_copy(ins), attrs)
    many = mine(_copy(ins), attrs)
    for k in one:
        np.testing.assert_array_equal(one[k], many[k], err_msg=k)
