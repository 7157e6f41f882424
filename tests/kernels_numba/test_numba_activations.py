"""oar-kernels-numba's smooth activations and softmax kernels against the numpy kernels.

Forward passes through libm's exp/tanh/erf agree within float tolerance; the gradients
the docstrings promise bit for bit are compared exactly. Sizes above ``PARALLEL_MIN``
exercise the parallel twin, ``MID`` the serial loop, small ones the fallback.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("oar_kernels_numba")
from oar_kernels_numba.compat import unavailable_reason

if unavailable_reason() is not None:
    pytest.skip(f"numba unavailable: {unavailable_reason()}", allow_module_level=True)

from oar.api import registries
from oar_kernels_numba import _jit
from oar_kernels_numba.plugin import PRIORITY

rng = np.random.default_rng(23)
BIG = _jit.PARALLEL_MIN + 37
MID = _jit.SMALL + 5
TOL = {"float32": (2e-6, 2e-6), "float64": (1e-6, 1e-6)}  # the numpy gelu erf: abs err < 1.5e-7


def _close(got, want, dtype, exact=False):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        rtol, atol = TOL[dtype]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


CASES = [
    ("sigmoid", {}, "Out"),
    ("tanh", {}, "Out"),
    ("gelu", {"approximate": False}, "X"),
    ("gelu", {"approximate": True}, "X"),
    ("leaky_relu", {"alpha": 0.1}, "X"),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [(9, 7), (MID,), (BIG,)])
@pytest.mark.parametrize("op,attrs,slot", CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_activation_and_grad(op, attrs, slot, size, dtype, numba_pair):
    kernels = registries().kernels
    mine = kernels.lookup(op, "cpu", dtype).kernel  # tanh's forward is numpy's
    numpy_k = kernels.lookup_below(op, "cpu", dtype, PRIORITY).kernel
    x = (rng.standard_normal(size) * 4).astype(dtype)
    x.reshape(-1)[:2] = [0.0, -30.0]
    got, want = mine({"X": x.copy()}, attrs)["Out"], numpy_k({"X": x.copy()}, attrs)["Out"]
    _close(got, want, dtype, exact=op == "leaky_relu")
    donated = x.copy()
    out = mine({"X": donated}, attrs, donated=frozenset({"X"}))["Out"]
    assert out is donated or x.size < MID
    _close(out, want, dtype, exact=op == "leaky_relu")
    gmine, gnumpy = numba_pair(op + "_grad", dtype)
    d = rng.standard_normal(size).astype(dtype)
    ins = {"X": x, "Out": want, "Out@GRAD": d}
    got, want = gmine(dict(ins), attrs)["X@GRAD"], gnumpy(dict(ins), attrs)["X@GRAD"]
    _close(got, want, dtype, exact=op != "gelu")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [(9, 7), (MID,), (BIG,)])
def test_relu_and_grad_in_place_bit_for_bit(size, dtype, numba_pair):
    """Donated, relu and relu_grad write into their input (the compiled loops' in-place
    variants) with the numpy kernels' numbers, NaN included."""
    relu, relu_np = numba_pair("relu", dtype)
    grad, grad_np = numba_pair("relu_grad", dtype)
    x = rng.standard_normal(size).astype(dtype)
    x.reshape(-1)[:3] = [0.0, np.nan, -0.0]
    want = relu_np({"X": x.copy()}, {})["Out"]
    given = x.copy()
    out = relu({"X": given}, {}, donated=frozenset({"X"}))["Out"]
    assert out is given or x.size < MID
    np.testing.assert_array_equal(out, want)
    d = rng.standard_normal(size).astype(dtype)
    d.reshape(-1)[3] = np.nan
    ins = {"Out": want, "Out@GRAD": d}
    expect = grad_np(dict(ins), {})["X@GRAD"]
    given = d.copy()
    got = grad({"Out": want, "Out@GRAD": given}, {}, donated=frozenset({"Out@GRAD"}))["X@GRAD"]
    assert got is given or x.size < MID
    np.testing.assert_array_equal(got, expect)
    np.testing.assert_array_equal(grad(dict(ins), {})["X@GRAD"], expect)  # not donated
    np.testing.assert_array_equal(ins["Out@GRAD"], d)


def _labels(n, c, ignore=None):
    lab = rng.integers(0, c, (n, 1))
    if ignore is not None:
        lab[::5] = ignore
    return lab


@pytest.mark.parametrize("shape", [(6, 5), (MID // 10, 10), (4, BIG // 400, 100)])
@pytest.mark.parametrize("ignore", [-100, 3])
def test_softmax_with_cross_entropy_and_grad(shape, ignore, numba_pair):
    mine, numpy_k = numba_pair("softmax_with_cross_entropy")
    gmine, gnumpy = numba_pair("softmax_with_cross_entropy_grad")
    x = (rng.standard_normal(shape) * 3).astype("float32")
    lab = _labels(int(np.prod(shape[:-1])), shape[-1], ignore).reshape(shape[:-1] + (1,))
    attrs = {"soft_label": False, "ignore_index": ignore, "axis": -1, "numeric_stable_mode": True}
    got, want = (
        mine({"Logits": x, "Label": lab}, attrs),
        numpy_k({"Logits": x, "Label": lab}, attrs),
    )
    for k in want:
        _close(got[k], want[k], "float32")
    d = rng.standard_normal(shape[:-1] + (1,)).astype("float32")
    ins = {"Softmax": want["Softmax"], "Label": lab, "Loss@GRAD": d}
    _close(gmine(ins, attrs)["Logits@GRAD"], gnumpy(ins, attrs)["Logits@GRAD"], "float32", True)


def test_softmax_with_cross_entropy_bad_id_raises_the_numpy_error(numba_pair):
    mine, numpy_k = numba_pair("softmax_with_cross_entropy")
    x = rng.standard_normal((MID // 10, 10)).astype("float32")
    lab = _labels(x.shape[0], 10)
    lab[7] = 10
    attrs = {"soft_label": False, "ignore_index": -100, "axis": -1, "numeric_stable_mode": True}
    with pytest.raises(Exception) as want:
        numpy_k({"Logits": x, "Label": lab}, attrs)
    with pytest.raises(type(want.value)):
        mine({"Logits": x, "Label": lab}, attrs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(5, 3), (MID // 64, 64), (BIG // 200, 200)])
def test_softmax_and_grad(shape, dtype, numba_pair):
    mine, numpy_k = numba_pair("softmax", dtype)
    gmine, gnumpy = numba_pair("softmax_grad", dtype)
    x = (rng.standard_normal(shape) * 5).astype(dtype)
    attrs = {"axis": -1, "use_cudnn": False}
    want = numpy_k({"X": x.copy()}, attrs)["Out"]
    _close(mine({"X": x.copy()}, attrs)["Out"], want, dtype)
    d = rng.standard_normal(shape).astype(dtype)
    ins = {"Out": want, "Out@GRAD": d}
    _close(gmine(dict(ins), attrs)["X@GRAD"], gnumpy(dict(ins), attrs)["X@GRAD"], dtype)


@pytest.mark.parametrize(
    "shape, axis",
    [((40, 130), 1), ((3, 40, 130), 2), ((4, 9, 12, 13), 1), ((300, 260), 1)],
    ids=["fc", "fc-3d", "conv", "fc-parallel"],
)
def test_bias_relu_fusion_bit_for_bit(shape, axis):
    from types import SimpleNamespace

    from oar_kernels_numba.fusions import _make_bias_relu

    fused = _make_bias_relu("cpu")([SimpleNamespace(attrs={})], None)
    x = rng.standard_normal(shape).astype("float32")
    x.reshape(-1)[::7] = np.nan  # NaN propagates as through np.maximum
    b = rng.standard_normal(shape[axis]).astype("float32")
    out = fused({"0.X": x, "0.Y": b}, {"0": {"axis": axis}, "1": {}})
    bshape = [1] * x.ndim
    bshape[axis] = b.size
    _close(out["1.Out"], np.maximum(x + b.reshape(bshape), 0), "float32", exact=True)
    assert out["0.Out"].shape == x.shape
