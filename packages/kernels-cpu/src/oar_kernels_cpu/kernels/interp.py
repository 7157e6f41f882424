"""numpy kernels for bilinear_interp and nearest_interp.

Both resizes are separable linear maps: ``Out = A_h @ X @ A_w^T`` per image,
with small interpolation matrices built from Fluid's index rules; the
gradient is ``A_h^T @ dOut @ A_w``. Nearest forward is a gather.
"""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._util import scatter_add

xp = array_module(__name__)


def _out_size(inputs, attrs, h, w):
    if "OutSize" in inputs:
        oh, ow = (int(v) for v in xp.asarray(inputs["OutSize"]).reshape(-1)[:2])
    elif "SizeTensor" in inputs:
        oh, ow = (int(xp.asarray(v).reshape(-1)[0]) for v in inputs["SizeTensor"][:2])
    elif "Scale" in inputs or attrs["scale"] > 0:
        s = (
            float(xp.asarray(inputs["Scale"]).reshape(-1)[0])
            if "Scale" in inputs
            else attrs["scale"]
        )
        oh, ow = int(h * s), int(w * s)
    else:
        oh, ow = attrs["out_h"], attrs["out_w"]
    if oh <= 0 or ow <= 0:
        raise ValueError(
            f"{attrs['interp_method']}_interp: output size must be positive, got {[oh, ow]}"
        )
    return oh, ow


def _ratio(size, out, align_corners):
    if out <= 1:
        return 0.0
    return (size - 1) / (out - 1) if align_corners else size / out


def _bilinear_matrix(size, out, align_corners, align_mode, dtype):
    ratio = _ratio(size, out, align_corners)
    k = xp.arange(out)
    half = align_mode == 0 and not align_corners
    src = ratio * (k + 0.5) - 0.5 if half else ratio * k
    src = xp.maximum(src, 0.0)
    lo = xp.maximum(src.astype(np.int64) if half else (ratio * k).astype(np.int64), 0)
    lo = xp.minimum(lo, size - 1)
    hi = xp.minimum(lo + 1, size - 1)
    frac = src - lo
    a = xp.zeros((out, size), np.float64)
    scatter_add(xp, a, (k, lo), 1.0 - frac)
    scatter_add(xp, a, (k, hi), frac)
    return a.astype(dtype)


def _nearest_index(size, out, align_corners):
    ratio = _ratio(size, out, align_corners)
    k = xp.arange(out)
    idx = (ratio * k + 0.5).astype(np.int64) if align_corners else (ratio * k).astype(np.int64)
    return xp.minimum(idx, size - 1)


def _nchw(x, attrs):
    return x.transpose(0, 3, 1, 2) if attrs["data_layout"] == "NHWC" else x


def _back(y, attrs):
    return xp.ascontiguousarray(y.transpose(0, 2, 3, 1)) if attrs["data_layout"] == "NHWC" else y


def _matrices(x_hw, out_hw, attrs, dtype):
    if attrs["interp_method"] == "bilinear":
        return (
            _bilinear_matrix(
                x_hw[0], out_hw[0], attrs["align_corners"], attrs["align_mode"], dtype
            ),
            _bilinear_matrix(
                x_hw[1], out_hw[1], attrs["align_corners"], attrs["align_mode"], dtype
            ),
        )
    mats = []
    for size, out in zip(x_hw, out_hw):
        m = xp.zeros((out, size), dtype)
        m[xp.arange(out), _nearest_index(size, out, attrs["align_corners"])] = 1
        mats.append(m)
    return mats


def _forward(inputs, attrs):
    x = _nchw(inputs["X"], attrs)
    oh, ow = _out_size(inputs, attrs, *x.shape[2:])
    if attrs["interp_method"] == "nearest":
        ih = _nearest_index(x.shape[2], oh, attrs["align_corners"])
        iw = _nearest_index(x.shape[3], ow, attrs["align_corners"])
        return {"Out": _back(xp.ascontiguousarray(x[:, :, ih][:, :, :, iw]), attrs)}
    ah, aw = _matrices(x.shape[2:], (oh, ow), attrs, x.dtype)
    return {"Out": _back(xp.matmul(xp.matmul(ah, x), aw.T), attrs)}


def _grad(inputs, attrs):
    x = _nchw(inputs["X"], attrs)
    dy = _nchw(inputs["Out@GRAD"], attrs)
    ah, aw = _matrices(x.shape[2:], dy.shape[2:], attrs, x.dtype)
    return {"X@GRAD": _back(xp.matmul(xp.matmul(ah.T, dy), aw), attrs)}


for _name in ("bilinear_interp", "nearest_interp"):
    kernel(_name, FLOATS)(_forward)
    kernel(_name + "_grad", FLOATS)(_grad)
