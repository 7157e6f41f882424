"""oar-kernels-numba's pool2d / max_pool2d_with_index and their gradients against numpy's.

Max pooling (values, indices, gradients) must equal the numpy kernels bit for bit, ties
and overlapping windows included; averages within float tolerance. One large case
at 1 thread and at the default threads (serial and parallel twins) must agree exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("oar_kernels_numba")
from oar_kernels_numba.compat import unavailable_reason

if unavailable_reason() is not None:
    pytest.skip(f"numba unavailable: {unavailable_reason()}", allow_module_level=True)

from oar.api import limit_cpu_math_threads
from oar.testing import OpCase, check_case
from oar_kernels_numba import _arrays, _jit

rng = np.random.default_rng(41)
TOL = {"float32": dict(rtol=1e-6, atol=1e-6), "float64": dict(rtol=1e-13, atol=1e-14)}

GEOMETRIES = {
    "k2s2": dict(ksize=[2, 2], strides=[2, 2], paddings=[0, 0]),
    "k3s2p1": dict(ksize=[3, 3], strides=[2, 2], paddings=[1, 1]),
    "k2s2_ceil": dict(ksize=[2, 2], strides=[2, 2], paddings=[1, 0, 1, 0], ceil_mode=True),
    "k2s2p2": dict(ksize=[2, 2], strides=[2, 2], paddings=[2, 2]),  # windows of padding only
    "k3s2p1_ceil": dict(ksize=[3, 3], strides=[2, 2], paddings=[1, 1], ceil_mode=True),
    "k3x2_s1x2_pad4": dict(ksize=[3, 2], strides=[1, 2], paddings=[1, 0, 0, 1]),
    "same": dict(ksize=[3, 3], strides=[2, 2], paddings=[0, 0], padding_algorithm="SAME"),
    "adaptive_even": dict(ksize=[6, 7], strides=[1, 1], paddings=[0, 0], adaptive=True),
}
# one image size; three window geometries (each compiles its own loops, once per dtype)
SHAPE = (3, 2, 12, 14)


def _attrs(geo, pooling_type, exclusive=True):
    return {
        "pooling_type": pooling_type,
        "global_pooling": False,
        "ceil_mode": False,
        "exclusive": exclusive,
        "adaptive": False,
        "data_format": "NCHW",
        "padding_algorithm": "EXPLICIT",
        **GEOMETRIES[geo],
    }


def _x(shape, dtype, ties):
    if ties:  # relu-like: many equal values (zeros), so the first maximum decides
        return np.maximum(rng.integers(-2, 3, shape), 0).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.fixture(autouse=True)
def _compiled_at_every_size(monkeypatch):
    monkeypatch.setattr(_arrays, "SMALL", 0)


def _fwd_and_grad(pair, attrs, x, dtype):
    mine, numpy_k = pair("pool2d", dtype)
    gmine, gnumpy = pair("pool2d_grad", dtype)
    got, want = mine({"X": x}, attrs)["Out"], numpy_k({"X": x}, attrs)["Out"]
    dy = np.random.default_rng(x.size).standard_normal(want.shape).astype(dtype)
    gins = {"X": x, "Out": want, "Out@GRAD": dy}
    return got, want, gmine(dict(gins), attrs)["X@GRAD"], gnumpy(dict(gins), attrs)["X@GRAD"]


def _geo_dtype():
    grid = [(g, "float32") for g in sorted(GEOMETRIES)]
    return grid + [("k3s2p1", "float64"), ("k2s2_ceil", "float64")]


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("geo,dtype", _geo_dtype())
def test_max_pool2d_and_grad_bit_for_bit(geo, dtype, ties, numba_pair):
    x = _x(SHAPE, dtype, ties)
    got, want, dgot, dwant = _fwd_and_grad(numba_pair, _attrs(geo, "max"), x, dtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert dgot.dtype == dwant.dtype and dgot.shape == x.shape
    np.testing.assert_array_equal(dgot, dwant)


@pytest.mark.parametrize("exclusive", [True, False])
@pytest.mark.parametrize("geo,dtype", _geo_dtype())
def test_avg_pool2d_and_grad(geo, dtype, exclusive, numba_pair):
    x = _x(SHAPE, dtype, False)
    got, want, dgot, dwant = _fwd_and_grad(numba_pair, _attrs(geo, "avg", exclusive), x, dtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL[dtype])
    assert dgot.dtype == dwant.dtype and dgot.shape == x.shape
    np.testing.assert_allclose(dgot, dwant, **TOL[dtype])


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("geo", ["k2s2", "k2s2p2", "k3s2p1", "k3x2_s1x2_pad4", "adaptive_even"])
def test_max_pool2d_with_index_and_grad_bit_for_bit(geo, ties, numba_pair):
    mine, numpy_k = numba_pair("max_pool2d_with_index")
    gmine, gnumpy = numba_pair("max_pool2d_with_index_grad")
    attrs = _attrs(geo, "max")
    x = _x(SHAPE, "float32", ties)
    got, want = mine({"X": x}, attrs), numpy_k({"X": x}, attrs)
    assert (want["Mask"] == -1).any() == (geo == "k2s2p2")  # windows of padding only: -1
    for k in ("Out", "Mask"):
        assert got[k].dtype == want[k].dtype, k
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)
    dy = rng.standard_normal(want["Out"].shape).astype("float32")
    gins = {"X": x, "Mask": want["Mask"], "Out@GRAD": dy}
    np.testing.assert_array_equal(
        gmine(dict(gins), attrs)["X@GRAD"], gnumpy(dict(gins), attrs)["X@GRAD"]
    )


@pytest.mark.parametrize("layout", ["NHWC", "uneven_adaptive", "global", "k4s4"])
def test_other_layouts_go_to_the_numpy_kernel(layout, numba_pair, monkeypatch):
    from oar_kernels_numba import _pool_loops

    mine, numpy_k = numba_pair("pool2d")
    attrs = _attrs("k2s2", "max")
    if layout == "NHWC":
        attrs["data_format"] = "NHWC"
    elif layout == "uneven_adaptive":
        attrs.update(adaptive=True, ksize=[3, 2])
    elif layout == "global":
        attrs.update(global_pooling=True)
    else:
        attrs.update(ksize=[4, 4], strides=[4, 4])
    monkeypatch.setattr(_pool_loops, "geometry", None)  # compiled loops: not called
    x = _x((2, 7, 8, 8), "float32", False)
    np.testing.assert_array_equal(mine({"X": x}, attrs)["Out"], numpy_k({"X": x}, attrs)["Out"])


def test_results_do_not_depend_on_the_thread_count(numba_pair, monkeypatch):
    monkeypatch.setattr(_jit, "PARALLEL_MIN", 4096)  # the parallel twin, where threads allow it
    x = _x((32, 16, 12, 14), "float32", True)
    attrs = _attrs("k3s2p1", "max")
    with limit_cpu_math_threads(1):
        one = _fwd_and_grad(numba_pair, attrs, x, "float32")
    many = _fwd_and_grad(numba_pair, attrs, x, "float32")
    np.testing.assert_array_equal(one[0], many[0])
    np.testing.assert_array_equal(one[2], many[2])


def _r(*shape):  # distinct, well separated values: no near-ties for the numeric gradient
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) / n * 2 - 1).astype("float64")


def _numpy_ref(op):
    from oar.api import registries
    from oar_kernels_numba.plugin import PRIORITY

    def ref(X, **attrs):
        k = registries().kernels.lookup_below(op, "cpu", "float64", PRIORITY).kernel
        return k({"X": X}, attrs)

    return ref


GRAD_CASES = [
    OpCase(
        "pool2d",
        {"X": _r(1, 2, 7, 7)},
        {"pooling_type": t, "ksize": [3, 3], "strides": [2, 2], "paddings": [1, 1], **extra},
        ref=_numpy_ref("pool2d"),
        grad=["X"],
        name=f"{t}{'_ceil' if extra else ''}",
    )
    for t in ("max", "avg")
    for extra in ({}, {"ceil_mode": True, "exclusive": False})
] + [
    OpCase(
        "max_pool2d_with_index",
        {"X": _r(1, 2, 6, 6)},
        {"ksize": [3, 3], "strides": [2, 2], "paddings": [1, 1]},
        ref=_numpy_ref("max_pool2d_with_index"),
        grad=["X"],
        grad_outputs=["Out"],
        name="with_index",
    )
]


@pytest.mark.parametrize("grad_case", GRAD_CASES, ids=str)
def test_numeric_gradients_through_the_compiled_kernels(grad_case):
    check_case(grad_case)
