"""pool3d: max/avg over 3-D windows (strided views), global, ceil_mode, exclusive, adaptive.

Windows wholly in the padding behave as in pool2d's kernel (max floored at Fluid's -FLT_MAX,
index -1, exclusive average 0/0 = NaN).
"""

from __future__ import annotations

import numpy as np
from oar.api import pool3d_geometry

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._vol2col import col2vol, crop_nd, pad_nd, windows_nd
from oar_kernels_cpu.kernels.pool import LOWEST

xp = array_module(__name__)
_KAX = (2, 3, 4)  # the window axes of a (N, C, KD, KH, KW, OD, OH, OW) view


def _first(x, attrs):
    return xp.moveaxis(x, -1, 1) if attrs["data_format"] == "NDHWC" else x


def _back(y, attrs):
    return xp.ascontiguousarray(xp.moveaxis(y, 1, -1)) if attrs["data_format"] == "NDHWC" else y


def _full_pads(size, k, s, pads, out):
    """Paddings with the extra trailing rows ceil_mode windows reach."""
    p = list(pads)
    for i in range(3):
        need = (out[i] - 1) * s[i] + k[i] - (size[i] + p[2 * i] + p[2 * i + 1])
        p[2 * i + 1] += max(need, 0)
    return tuple(p)


def _counts(x, k, s, pads, out, attrs):
    """Divisor per output position: the window inside the input (exclusive) or its volume;
    NaN for a window of padding only (Fluid's 0/0, without a division-by-zero warning)."""
    if not attrs["exclusive"]:
        return float(k[0] * k[1] * k[2])
    ones = xp.ones((1, 1) + x.shape[2:], x.dtype)
    count = windows_nd(xp, pad_nd(xp, ones, pads), k, s, (1, 1, 1), out).sum(axis=_KAX)
    return xp.where(count == 0, xp.nan, count).astype(x.dtype)


def _bins(size, n):
    return [(i * size // n, -(-(i + 1) * size // n)) for i in range(n)]


def _adaptive_cells(x, out):
    d, h, w = x.shape[2:]
    for i, (d0, d1) in enumerate(_bins(d, out[0])):
        for j, (h0, h1) in enumerate(_bins(h, out[1])):
            for m, (w0, w1) in enumerate(_bins(w, out[2])):
                yield (i, j, m), (slice(d0, d1), slice(h0, h1), slice(w0, w1))


@kernel("pool3d", FLOATS)
def pool3d(inputs, attrs):
    x = _first(inputs["X"], attrs)
    k, s, pads, out = pool3d_geometry(x.shape[2:], attrs)
    is_max = attrs["pooling_type"] == "max"
    if attrs["adaptive"] and not attrs["global_pooling"]:
        y = xp.empty(x.shape[:2] + tuple(out), x.dtype)
        for o, cell in _adaptive_cells(x, out):
            v = x[(slice(None), slice(None)) + cell]
            y[(slice(None), slice(None)) + o] = v.max(axis=_KAX) if is_max else v.mean(axis=_KAX)
        return {"Out": _back(xp.maximum(y, LOWEST) if is_max else y, attrs)}
    pads = _full_pads(x.shape[2:], k, s, pads, out)
    fill = -np.inf if is_max else 0.0
    win = windows_nd(xp, pad_nd(xp, x, pads, fill), k, s, (1, 1, 1), out)
    if is_max:
        y = xp.maximum(win.max(axis=_KAX), LOWEST)
    else:
        y = win.sum(axis=_KAX) / _counts(x, k, s, pads, out, attrs)
    return {"Out": _back(y.astype(x.dtype, copy=False), attrs)}


def _reached(window_max):
    """Windows whose maximum reaches Fluid's -FLT_MAX floor: Fluid 1.8.5 routes the gradient
    to the first input equal to the (floored) output, so a window of -inf takes none."""
    return window_max >= LOWEST


@kernel("pool3d_grad", FLOATS)
def pool3d_grad(inputs, attrs):
    x = _first(inputs["X"], attrs)
    dy = _first(inputs["Out@GRAD"], attrs)
    k, s, pads, out = pool3d_geometry(x.shape[2:], attrs)
    is_max = attrs["pooling_type"] == "max"
    if attrs["adaptive"] and not attrs["global_pooling"]:
        dx = xp.zeros_like(x)
        for o, cell in _adaptive_cells(x, out):
            idx = (slice(None), slice(None)) + cell
            g = dy[(slice(None), slice(None)) + o][..., None, None, None]
            v = x[idx]
            if is_max:
                flat = v.reshape(v.shape[:2] + (-1,))
                hot = xp.arange(flat.shape[-1]) == flat.argmax(axis=-1)[..., None]
                hot &= _reached(flat.max(axis=-1, keepdims=True))
                dx[idx] += hot.reshape(v.shape) * g
            else:
                dx[idx] += g / float(v.shape[2] * v.shape[3] * v.shape[4])
        return {"X@GRAD": _back(dx, attrs)}
    pads = _full_pads(x.shape[2:], k, s, pads, out)
    n, c = x.shape[:2]
    kk = k[0] * k[1] * k[2]
    if is_max:
        win = windows_nd(xp, pad_nd(xp, x, pads, -np.inf), k, s, (1, 1, 1), out)
        flat = win.reshape((n, c, kk) + tuple(out))  # copies the windows once
        hot = xp.arange(kk).reshape((1, 1, kk, 1, 1, 1)) == flat.argmax(axis=2)[:, :, None]
        cols = hot * xp.where(_reached(flat.max(axis=2)), dy, 0)[:, :, None]
    else:
        g = dy / _counts(x, k, s, pads, out, attrs)
        cols = xp.broadcast_to(g[:, :, None], (n, c, kk) + tuple(out))
    cols = cols.astype(x.dtype, copy=False).reshape((n, c) + tuple(k) + tuple(out))
    padded = tuple(x.shape[2 + i] + pads[2 * i] + pads[2 * i + 1] for i in range(3))
    dx = crop_nd(col2vol(xp, cols, padded, s, (1, 1, 1)), pads)
    return {"X@GRAD": _back(xp.ascontiguousarray(dx), attrs)}


def _adaptive_argmax(x, out):
    """Max of each adaptive cell and the flat ``(d*H + h)*W + w`` index of its first maximum."""
    d, h, w = x.shape[2:]
    y = xp.empty(x.shape[:2] + tuple(out), x.dtype)
    mask = xp.empty(x.shape[:2] + tuple(out), np.int64)
    for o, cell in _adaptive_cells(x, out):
        v = x[(slice(None), slice(None)) + cell]
        arg = v.reshape(v.shape[:2] + (-1,)).argmax(axis=-1)
        kd, kh, kw = xp.unravel_index(arg, v.shape[2:])
        at = (slice(None), slice(None)) + o
        y[at] = v.max(axis=_KAX)
        mask[at] = ((kd + cell[0].start) * h + kh + cell[1].start) * w + kw + cell[2].start
    return y, mask


def _regular_argmax(x, k, s, pads, out):
    d, h, w = x.shape[2:]
    n, c = x.shape[:2]
    win = windows_nd(xp, pad_nd(xp, x, pads, -np.inf), k, s, (1, 1, 1), out)
    flat = win.reshape((n, c, k[0] * k[1] * k[2]) + tuple(out))
    arg = flat.argmax(axis=2)
    kd, kh, kw = xp.unravel_index(arg, tuple(k))
    od, oh, ow = (xp.arange(o).reshape(sh) for o, sh in zip(out, ((-1, 1, 1), (-1, 1), (-1,))))
    pos_d = od * s[0] - pads[0] + kd
    pos_h = oh * s[1] - pads[2] + kh
    pos_w = ow * s[2] - pads[4] + kw
    return xp.take_along_axis(flat, arg[:, :, None], axis=2)[:, :, 0], (
        pos_d * h + pos_h
    ) * w + pos_w


@kernel("max_pool3d_with_index", FLOATS)
def max_pool3d_with_index(inputs, attrs):
    """Max pooling that also returns each maximum's flat index in its input volume."""
    x = inputs["X"]
    k, s, pads, out = pool3d_geometry(x.shape[2:], attrs)
    if attrs["adaptive"] and not attrs["global_pooling"]:
        y, mask = _adaptive_argmax(x, out)
    else:
        y, mask = _regular_argmax(x, k, s, _full_pads(x.shape[2:], k, s, pads, out), out)
    y = xp.maximum(y, LOWEST)  # Fluid's -FLT_MAX start; nothing above it: index -1
    mask = xp.where(y == LOWEST, -1, mask)
    return {"Out": y.astype(x.dtype, copy=False), "Mask": mask.astype(np.int32)}


@kernel("max_pool3d_with_index_grad", FLOATS)
def max_pool3d_with_index_grad(inputs, attrs):
    x, mask, dy = inputs["X"], inputs["Mask"], inputs["Out@GRAD"]
    n, c = x.shape[:2]
    vol = x.shape[2] * x.shape[3] * x.shape[4]
    base = (xp.arange(n * c) * vol).reshape((n, c) + (1,) * (mask.ndim - 2))
    found = mask >= 0  # -1: a window with nothing in it, no gradient
    where = (base + xp.where(found, mask, 0).astype(np.int64)).reshape(-1)
    weights = xp.where(found, dy, 0).reshape(-1).astype("float64")
    dx = xp.bincount(where, weights=weights, minlength=n * c * vol)
    return {"X@GRAD": dx.reshape(x.shape).astype(x.dtype)}
