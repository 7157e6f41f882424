"""numpy kernels for bilinear_interp and nearest_interp.

Both resizes are separable linear maps: ``Out = A_h @ X @ A_w^T`` per image,
with small interpolation matrices built from Fluid's index rules; the
gradient is ``A_h^T @ dOut @ A_w`` (products through :mod:`._gemm`). Nearest forward is a
gather.
"""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, _gemm, array_module, kernel
from oar_kernels_cpu.kernels._interp import linear_weights, out_size, ratio

xp = array_module(__name__)


def _nearest_index(size, out, align_corners):
    r = ratio(size, out, align_corners)
    k = xp.arange(out)
    idx = (r * k + 0.5).astype(np.int64) if align_corners else (r * k).astype(np.int64)
    return xp.minimum(idx, size - 1)


def _nchw(x, attrs):
    return x.transpose(0, 3, 1, 2) if attrs["data_layout"] == "NHWC" else x


def _back(y, attrs):
    return xp.ascontiguousarray(y.transpose(0, 2, 3, 1)) if attrs["data_layout"] == "NHWC" else y


def _matrices(x_hw, out_hw, attrs, dtype):
    if attrs["interp_method"] == "bilinear":
        return tuple(
            linear_weights(xp, size, out, attrs["align_corners"], attrs["align_mode"], dtype)
            for size, out in zip(x_hw, out_hw)
        )
    mats = []
    for size, out in zip(x_hw, out_hw):
        m = xp.zeros((out, size), dtype)
        m[xp.arange(out), _nearest_index(size, out, attrs["align_corners"])] = 1
        mats.append(m)
    return mats


def _forward(inputs, attrs):
    x = _nchw(inputs["X"], attrs)
    oh, ow = out_size(
        xp, inputs, attrs, x.shape[2:], ("out_h", "out_w"), f"{attrs['interp_method']}_interp"
    )
    if attrs["interp_method"] == "nearest":
        ih = _nearest_index(x.shape[2], oh, attrs["align_corners"])
        iw = _nearest_index(x.shape[3], ow, attrs["align_corners"])
        return {"Out": _back(xp.ascontiguousarray(x[:, :, ih][:, :, :, iw]), attrs)}
    ah, aw = _matrices(x.shape[2:], (oh, ow), attrs, x.dtype)
    return {"Out": _back(_gemm.matmul(xp, _gemm.matmul(xp, ah, x), aw.T), attrs)}


def _grad(inputs, attrs):
    x = _nchw(inputs["X"], attrs)
    dy = _nchw(inputs["Out@GRAD"], attrs)
    ah, aw = _matrices(x.shape[2:], dy.shape[2:], attrs, x.dtype)
    return {"X@GRAD": _back(_gemm.matmul(xp, _gemm.matmul(xp, ah.T, dy), aw), attrs)}


for _name in ("bilinear_interp", "nearest_interp"):
    kernel(_name, FLOATS)(_forward)
    kernel(_name + "_grad", FLOATS)(_grad)
