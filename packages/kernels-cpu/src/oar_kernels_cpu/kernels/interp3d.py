"""trilinear_interp: a separable linear map, one small interpolation matrix per axis."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._util import scatter_add

xp = array_module(__name__)


def _out_size(inputs, attrs, dhw):
    if "OutSize" in inputs:
        out = [int(v) for v in xp.asarray(inputs["OutSize"]).reshape(-1)[:3]]
    elif "SizeTensor" in inputs:
        out = [int(xp.asarray(v).reshape(-1)[0]) for v in inputs["SizeTensor"][:3]]
    elif "Scale" in inputs or attrs["scale"] > 0:
        s = (
            float(xp.asarray(inputs["Scale"]).reshape(-1)[0])
            if "Scale" in inputs
            else attrs["scale"]
        )
        out = [int(v * s) for v in dhw]
    else:
        out = [attrs["out_d"], attrs["out_h"], attrs["out_w"]]
    if min(out) <= 0:
        raise ValueError(f"trilinear_interp: output size must be positive, got {out}")
    return out


def _matrix(size, out, align_corners, align_mode, dtype):
    """(out, size): Fluid's linear interpolation weights along one axis."""
    ratio = 0.0 if out <= 1 else ((size - 1) / (out - 1) if align_corners else size / out)
    k = xp.arange(out)
    half = align_mode == 0 and not align_corners
    src = xp.maximum(ratio * (k + 0.5) - 0.5 if half else ratio * k, 0.0)
    lo = xp.minimum(src.astype(np.int64), size - 1)
    hi = xp.minimum(lo + 1, size - 1)
    frac = src - lo
    a = xp.zeros((out, size), np.float64)
    scatter_add(xp, a, (k, lo), 1.0 - frac)
    scatter_add(xp, a, (k, hi), frac)
    return a.astype(dtype)


def _first(x, attrs):
    return xp.moveaxis(x, -1, 1) if attrs["data_layout"] == "NDHWC" else x


def _back(y, attrs):
    return xp.ascontiguousarray(xp.moveaxis(y, 1, -1)) if attrs["data_layout"] == "NDHWC" else y


def _apply(x, mats):
    """Contract the three spatial axes of (N, C, D, H, W) with (out_i, in_i) matrices."""
    t = xp.tensordot(x, mats[2], axes=([4], [1]))  # (N, C, D, H, OW)
    t = xp.tensordot(t, mats[1], axes=([3], [1]))  # (N, C, D, OW, OH)
    t = xp.tensordot(t, mats[0], axes=([2], [1]))  # (N, C, OW, OH, OD)
    return xp.ascontiguousarray(t.transpose(0, 1, 4, 3, 2))


def _mats(dhw, out, attrs, dtype):
    return [
        _matrix(s, o, attrs["align_corners"], attrs["align_mode"], dtype) for s, o in zip(dhw, out)
    ]


@kernel("trilinear_interp", FLOATS)
def trilinear_interp(inputs, attrs):
    x = _first(inputs["X"], attrs)
    out = _out_size(inputs, attrs, x.shape[2:])
    return {"Out": _back(_apply(x, _mats(x.shape[2:], out, attrs, x.dtype)), attrs)}


@kernel("trilinear_interp_grad", FLOATS)
def trilinear_interp_grad(inputs, attrs):
    x = _first(inputs["X"], attrs)
    dy = _first(inputs["Out@GRAD"], attrs)
    mats = _mats(x.shape[2:], dy.shape[2:], attrs, x.dtype)
    return {"X@GRAD": _back(_apply(dy, [m.T for m in mats]), attrs)}
