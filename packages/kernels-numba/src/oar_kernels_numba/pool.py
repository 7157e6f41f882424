"""pool2d, max_pool2d_with_index and their gradients: one compiled pass per plane.

NCHW float32/float64 inputs with regular windows (explicit or SAME/VALID paddings,
ceil_mode, exclusive or inclusive averages, global pooling, adaptive pooling whose
windows divide the input evenly); NHWC, uneven adaptive windows, small or unusual
arrays go to the kernel this overrides, which also raises the errors. Max pooling
(values, indices, gradients) equals the numpy kernel bit for bit; averages add the
same taps in the same order. Max pooling is floored at Fluid's -FLT_MAX (a window of
padding only: -FLT_MAX, index -1), as in the numpy kernel.
"""

from __future__ import annotations

import numpy as np
from oar.api import pool_geometry

from oar_kernels_numba._arrays import DTYPES, plain
from oar_kernels_numba._fallback import Fallback
from oar_kernels_numba._limits import MAX_STRIDE, MAX_TAPS

LOWEST = float(np.finfo(np.float32).min)  # Fluid's -FLT_MAX: max pooling's floor

_OPS = (
    "pool2d",
    "pool2d_grad",
    "max_pool2d_with_index",
    "max_pool2d_with_index_grad",
)


def _geometry(x, attrs):
    """(kh, kw, sh, sw, pad_top, pad_left, oh, ow) of a regular NCHW pool, or None."""
    if not plain(x) or x.ndim != 4 or attrs.get("data_format", "NCHW") == "NHWC":
        return None
    hw = x.shape[2:]
    k, s, pads, out = pool_geometry(hw, attrs)
    if min(out) <= 0:
        return None  # the numpy kernel raises
    if attrs.get("adaptive") and not attrs.get("global_pooling"):
        if hw[0] % out[0] or hw[1] % out[1]:
            return None
        k = s = (hw[0] // out[0], hw[1] // out[1])
    if k[0] * k[1] > MAX_TAPS or max(s) > MAX_STRIDE:
        return None  # numpy's whole-batch passes win for large windows (global pooling)
    return int(k[0]), int(k[1]), int(s[0]), int(s[1]), int(pads[0]), int(pads[2]), *out


def _planes(a):
    return a.reshape(a.shape[0] * a.shape[1], a.shape[2], a.shape[3])


def _like(a, x) -> bool:
    return type(a) is np.ndarray and a.dtype == x.dtype and a.flags.c_contiguous


def _divisor(x, g, attrs):
    """(oh, ow) divisors of an average: the real pixels of each window (exclusive, adaptive)
    or kh*kw, in x's dtype."""
    kh, kw, sh, sw, pt, pl, oh, ow = g
    if not (attrs.get("exclusive", True) or attrs.get("adaptive", False)):
        return np.full((oh, ow), kh * kw, x.dtype)
    counts = []
    for k, s, pad, size, n in ((kh, sh, pt, x.shape[2], oh), (kw, sw, pl, x.shape[3], ow)):
        start = np.arange(n) * s - pad
        counts.append(np.minimum(start + k, size) - np.maximum(start, 0))
    return np.outer(counts[0], counts[1]).astype(x.dtype)


class _Kernels:
    def __init__(self, device: str, priority: int) -> None:
        self.fb = {op: Fallback(op, device, priority) for op in _OPS}
        from oar_kernels_numba import _pool_loops  # numba compiles on first call

        self.loops = _pool_loops

    def _forward(self, x, g, is_max, attrs, with_mask):
        kh, kw, sh, sw, pt, pl, oh, ow = g
        n, c = x.shape[:2]
        y = np.empty((n, c, oh, ow), x.dtype)
        mask = None
        if with_mask:
            mask = np.empty(y.shape, np.int32)
            args = (kh, kw, sh, sw, pt, pl, _planes(y), _planes(mask))
            self.loops.max_fwd_index(x.size, _planes(x), *args)
        elif is_max:
            self.loops.geometry(kh, kw, sh, sw).max_fwd(x.size, _planes(x), pt, pl, _planes(y))
        else:
            args = (pt, pl, _divisor(x, g, attrs), _planes(y))
            self.loops.geometry(kh, kw, sh, sw).avg_fwd(x.size, _planes(x), *args)
        if is_max:
            np.maximum(y, LOWEST, out=y)
        if with_mask:
            mask[y == LOWEST] = -1  # nothing above Fluid's -FLT_MAX start
        return y, mask

    def pool2d(self, inputs, attrs):
        x = inputs["X"]
        g = _geometry(x, attrs)
        if g is None:
            return self.fb["pool2d"](x.dtype, inputs, attrs)
        is_max = attrs.get("pooling_type", "max") == "max"
        return {"Out": self._forward(x, g, is_max, attrs, False)[0]}

    def pool2d_grad(self, inputs, attrs):
        x, dy = inputs["X"], inputs["Out@GRAD"]
        g = _geometry(x, attrs)
        is_max = attrs.get("pooling_type", "max") == "max"
        y = inputs.get("Out") if is_max else dy
        ok = g is not None and _like(dy, x) and _like(y, x)
        if not ok or dy.shape != (*x.shape[:2], *g[6:]) or y.shape != dy.shape:
            return self.fb["pool2d_grad"](x.dtype, inputs, attrs)
        loops, pt, pl = self.loops.geometry(*g[:4]), g[4], g[5]
        dx = np.empty_like(x)
        if is_max:
            args = (_planes(y), _planes(dy), pt, pl, _planes(dx))
            loops.max_grad(x.size, _planes(x), *args)
        else:
            loops.avg_grad(x.size, _planes(dy), pt, pl, _divisor(x, g, attrs), _planes(dx))
        return {"X@GRAD": dx}

    def max_pool2d_with_index(self, inputs, attrs):
        x = inputs["X"]
        g = _geometry(x, attrs)
        if g is None:
            return self.fb["max_pool2d_with_index"](x.dtype, inputs, attrs)
        y, mask = self._forward(x, g, True, attrs, True)
        return {"Out": y, "Mask": mask}

    def max_pool2d_with_index_grad(self, inputs, attrs):
        x, mask, dy = inputs["X"], inputs["Mask"], inputs["Out@GRAD"]
        ok = plain(x) and x.ndim == 4 and _like(dy, x) and type(mask) is np.ndarray
        if not ok or mask.shape != dy.shape or dy.ndim != 4 or dy.shape[:2] != x.shape[:2]:
            return self.fb["max_pool2d_with_index_grad"](x.dtype, inputs, attrs)
        planes = x.shape[0] * x.shape[1]
        m = np.ascontiguousarray(mask, np.int64).reshape(planes, -1)
        hw = x.shape[2] * x.shape[3]
        if m.size and (m.min() < 0 or m.max() >= hw):
            return self.fb["max_pool2d_with_index_grad"](x.dtype, inputs, attrs)
        acc = np.empty((planes, hw))
        self.loops.index_grad(x.size, dy.reshape(planes, -1), m, acc)
        return {"X@GRAD": acc.astype(x.dtype).reshape(x.shape)}


def register(registry, family: str, device: str, priority: int) -> None:
    k = _Kernels(device, priority)
    for op in _OPS:
        registry.register_kernel(op, device, DTYPES, getattr(k, op), priority)
