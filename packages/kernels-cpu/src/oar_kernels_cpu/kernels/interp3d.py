"""trilinear_interp: a separable linear map, one small interpolation matrix per axis."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, _gemm, array_module, kernel
from oar_kernels_cpu.kernels._interp import linear_weights, out_size

xp = array_module(__name__)


def _first(x, attrs):
    return xp.moveaxis(x, -1, 1) if attrs["data_layout"] == "NDHWC" else x


def _back(y, attrs):
    return xp.ascontiguousarray(xp.moveaxis(y, 1, -1)) if attrs["data_layout"] == "NDHWC" else y


def _apply(x, mats):
    """Contract the three spatial axes of (N, C, D, H, W) with (out_i, in_i) matrices, one
    product per axis (through :mod:`._gemm`)."""
    n, c, d, h, w = x.shape
    od, oh, ow = (m.shape[0] for m in mats)
    t = _gemm.matmul(xp, x.reshape(-1, w), mats[2].T)  # (N*C*D*H, OW)
    t = _gemm.matmul(xp, mats[1], t.reshape(n * c * d, h, ow))  # (N*C*D, OH, OW)
    t = _gemm.matmul(xp, mats[0], t.reshape(n * c, d, oh * ow))  # (N*C, OD, OH*OW)
    return t.reshape(n, c, od, oh, ow)


def _mats(dhw, out, attrs, dtype):
    return [
        linear_weights(xp, s, o, attrs["align_corners"], attrs["align_mode"], dtype)
        for s, o in zip(dhw, out)
    ]


@kernel("trilinear_interp", FLOATS)
def trilinear_interp(inputs, attrs):
    x = _first(inputs["X"], attrs)
    out = out_size(xp, inputs, attrs, x.shape[2:], ("out_d", "out_h", "out_w"), "trilinear_interp")
    return {"Out": _back(_apply(x, _mats(x.shape[2:], out, attrs, x.dtype)), attrs)}


@kernel("trilinear_interp_grad", FLOATS)
def trilinear_interp_grad(inputs, attrs):
    x = _first(inputs["X"], attrs)
    dy = _first(inputs["Out@GRAD"], attrs)
    mats = _mats(x.shape[2:], dy.shape[2:], attrs, x.dtype)
    return {"X@GRAD": _back(_apply(dy, [m.T for m in mats]), attrs)}
