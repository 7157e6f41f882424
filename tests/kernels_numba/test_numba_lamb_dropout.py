"""oar-kernels-numba's lamb and dropout against the numpy kernels they override."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("oar_kernels_numba")
from oar_kernels_numba.compat import unavailable_reason

if unavailable_reason() is not None:
    pytest.skip(f"numba unavailable: {unavailable_reason()}", allow_module_level=True)

from oar_kernels_numba import _jit

rng = np.random.default_rng(29)
BIG = _jit.PARALLEL_MIN + 37
MID = _jit.SMALL + 5


def _copy(d):
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in d.items()}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [40, MID, BIG])
def test_lamb(dtype, size, numba_pair):
    mine, numpy_k = numba_pair("lamb", dtype)
    inputs = {
        "Param": rng.standard_normal(size).astype(dtype),
        "Grad": rng.standard_normal(size).astype(dtype),
        "Moment1": rng.standard_normal(size).astype(dtype) * 0.1,
        "Moment2": rng.random(size).astype(dtype) * 0.1,
        "LearningRate": np.array([0.01], dtype),
        "Beta1Pow": np.array([0.9], dtype),
        "Beta2Pow": np.array([0.999], dtype),
    }
    attrs = {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-6, "weight_decay": 0.01}
    for _ in range(2):  # step 2 reads the state step 1 wrote
        got, want = mine(_copy(inputs), attrs), numpy_k(_copy(inputs), attrs)
        assert got.keys() == want.keys()
        for k in want:
            assert got[k].dtype == want[k].dtype
            np.testing.assert_allclose(got[k], want[k], rtol=1e-6, atol=1e-7, err_msg=k)
        np.testing.assert_array_equal(got["Moment1Out"], want["Moment1Out"])
        np.testing.assert_array_equal(got["Moment2Out"], want["Moment2Out"])
        inputs.update({k[:-3]: v for k, v in want.items()})


def test_lamb_ratio_does_not_depend_on_the_thread_count(numba_pair):
    mine, _ = numba_pair("lamb")
    inputs = {
        "Param": rng.standard_normal(BIG).astype("float32"),
        "Grad": rng.standard_normal(BIG).astype("float32"),
        "Moment1": np.zeros(BIG, "float32"),
        "Moment2": np.zeros(BIG, "float32"),
        "LearningRate": np.array([0.01], "float32"),
        "Beta1Pow": np.array([0.9], "float32"),
        "Beta2Pow": np.array([0.999], "float32"),
    }
    attrs = {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-6, "weight_decay": 0.01}
    from oar.api import limit_cpu_math_threads

    with limit_cpu_math_threads(1):
        one = mine(_copy(inputs), attrs)
    many = mine(_copy(inputs), attrs)
    for k in one:
        np.testing.assert_array_equal(one[k], many[k], err_msg=k)


DROPOUT = {"dropout_prob": 0.3, "is_test": False, "fix_seed": True, "seed": 7}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("impl", ["upscale_in_train", "downgrade_in_infer"])
@pytest.mark.parametrize("size", [(6, 5), (MID,), (BIG // 64, 64)])
def test_seeded_dropout_and_grad_bit_for_bit(size, impl, dtype, numba_pair):
    mine, numpy_k = numba_pair("dropout", dtype)
    gmine, gnumpy = numba_pair("dropout_grad", dtype)
    attrs = dict(DROPOUT, dropout_implementation=impl)
    x = rng.standard_normal(size).astype(dtype)
    x.reshape(-1)[:2] = [-1.5, np.nan]
    wanted = frozenset({"Out", "Mask"})
    got, want = mine({"X": x}, attrs, wanted), numpy_k({"X": x}, attrs, wanted)
    for k in want:
        assert got[k].dtype == want[k].dtype, k
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)
    assert 0.5 < want["Mask"].mean() < 0.9
    dy = rng.standard_normal(size).astype(dtype)
    ins = {"Out@GRAD": dy, "Mask": want["Mask"]}
    np.testing.assert_array_equal(gmine(ins, attrs)["X@GRAD"], gnumpy(ins, attrs)["X@GRAD"])


def test_unseeded_dropout_draws_a_fresh_mask(numba_pair):
    mine, _ = numba_pair("dropout")
    attrs = dict(DROPOUT, fix_seed=False, seed=0, dropout_implementation="upscale_in_train")
    x = np.ones(MID, "float32")
    a = mine({"X": x}, attrs, frozenset({"Out", "Mask"}))
    b = mine({"X": x}, attrs, frozenset({"Out", "Mask"}))
    assert not np.array_equal(a["Mask"], b["Mask"])
    np.testing.assert_allclose(a["Out"], a["Mask"] / np.float32(0.7), rtol=1e-6)
