"""Pooling windows that lie wholly in the padding, against Fluid 1.8.5 golden data
(data/fluid18_pool_padding.py): max pooling gives -FLT_MAX there, index -1 and no
gradient; an exclusive average gives NaN, an inclusive one 0."""

from pathlib import Path

import numpy as np
import pytest
from oar_kernels_cpu.kernels import pool, pool3d

GOLDEN = np.load(Path(__file__).parent / "data" / "fluid18_pool_padding.npz")
LOWEST = np.finfo(np.float32).min


def _attrs(nd, pooling_type, exclusive, ceil_mode, pad):
    return {
        "ksize": [2] * nd,
        "strides": [2] * nd,
        "paddings": [pad] * nd,
        "pooling_type": pooling_type,
        "exclusive": exclusive,
        "ceil_mode": ceil_mode,
        "global_pooling": False,
        "adaptive": False,
        "padding_algorithm": "EXPLICIT",
        "data_format": "NCHW" if nd == 2 else "NCDHW",
    }


def _dy(y):
    return np.arange(1, y.size + 1, dtype=y.dtype).reshape(y.shape)


def _pool(nd, attrs, x):
    fwd, bwd = (pool.pool2d, pool.pool2d_grad) if nd == 2 else (pool3d.pool3d, pool3d.pool3d_grad)
    y = fwd({"X": x}, attrs)["Out"]
    dx = bwd({"X": x, "Out": y, "Out@GRAD": _dy(y)}, attrs)["X@GRAD"]
    return y, dx


CASES = [
    (nd, kind, pt, ex, ceil, pad)
    for nd in (2, 3)
    for kind, pt, ex, ceil, pad in (
        ("ceil_max", "max", True, True, 1),
        ("ceil_avg_ex", "avg", True, True, 1),
        ("ceil_avg_in", "avg", False, True, 1),
        ("pad2_max", "max", True, False, 2),
    )
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("nd,kind,pooling_type,exclusive,ceil_mode,pad", CASES)
def test_padding_only_windows_match_fluid(nd, kind, pooling_type, exclusive, ceil_mode, pad, dtype):
    x = GOLDEN[f"x{nd}"].astype(dtype)
    y, dx = _pool(nd, _attrs(nd, pooling_type, exclusive, ceil_mode, pad), x)
    want_y, want_dx = GOLDEN[f"p{nd}_{kind}_out"], GOLDEN[f"p{nd}_{kind}_dx"]
    assert y.dtype == x.dtype and dx.dtype == x.dtype
    # the golden data has windows of padding only
    assert np.isnan(want_y).any() or (want_y == LOWEST).any() or (want_y == 0).any()
    np.testing.assert_allclose(y, want_y, rtol=1e-6, atol=1e-7)  # NaN where Fluid has NaN
    np.testing.assert_allclose(dx, want_dx, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("nd", [2, 3])
def test_with_index_padding_only_windows_match_fluid(nd):
    x = GOLDEN[f"x{nd}"]
    attrs = _attrs(nd, "max", True, False, 2)
    del attrs["ceil_mode"], attrs["pooling_type"], attrs["exclusive"]
    fwd, bwd = (
        (pool.max_pool2d_with_index, pool.max_pool2d_with_index_grad)
        if nd == 2
        else (pool3d.max_pool3d_with_index, pool3d.max_pool3d_with_index_grad)
    )
    got = fwd({"X": x}, attrs)
    np.testing.assert_array_equal(got["Out"], GOLDEN[f"i{nd}_pad2_out"])
    np.testing.assert_array_equal(got["Mask"], GOLDEN[f"i{nd}_pad2_mask"])
    assert (got["Mask"] == -1).any()
    # index -1 takes no gradient: the same as pool{nd}d's max gradient in Fluid 1.8.5
    dx = bwd({"X": x, "Mask": got["Mask"], "Out@GRAD": _dy(got["Out"])}, attrs)["X@GRAD"]
    np.testing.assert_array_equal(dx, GOLDEN[f"p{nd}_pad2_max_dx"])


def test_a_window_of_minus_infinity_floors_at_minus_flt_max():
    x = np.full((1, 1, 2, 2), -np.inf, "float64")
    attrs = _attrs(2, "max", True, False, 0)
    y = pool.pool2d({"X": x}, attrs)["Out"]
    np.testing.assert_array_equal(y, [[[[LOWEST]]]])
    dx = pool.pool2d_grad({"X": x, "Out": y, "Out@GRAD": np.ones_like(y)}, attrs)["X@GRAD"]
    np.testing.assert_array_equal(dx, np.zeros_like(x))
