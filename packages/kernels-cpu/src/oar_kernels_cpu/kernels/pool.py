"""numpy kernels for pool2d and max_pool2d_with_index.

Regular windows go through a strided view of the padded input with one
vectorised reduction step per window tap (KH*KW whole-batch operations).
Adaptive windows that divide the input evenly are regular windows. Uneven
adaptive windows: average pooling is ``A_h @ X @ A_w^T / counts`` with 0/1
window matrices; max pooling reduces columns then rows (one vectorised step
per output column and per output row), and its gradient and indices come from
the first maximum (row-major) found the same separable way.

A window that lies wholly in the padding (padding >= ksize, or ceil_mode's trailing window)
follows Fluid: max pooling gives -FLT_MAX (every max is floored there, as Fluid's running max
starts at -FLT_MAX), index -1 and no gradient; an exclusive average gives 0/0 = NaN (no
gradient reaches the input), an inclusive one 0.

Regular pooling of a large NCHW batch, and its gradient, run in pieces of image planes on
the kernel thread pool (each plane is pooled alone, so the results are bit for bit the same).
"""

from __future__ import annotations

import numpy as np
from oar.api import pool_geometry

from oar_kernels_cpu.kernels import FLOATS, _parallel, _split, array_module, kernel
from oar_kernels_cpu.kernels._im2col import pad_nchw, windows

xp = array_module(__name__)
LOWEST = float(np.finfo(np.float32).min)  # Fluid's -FLT_MAX: max pooling's floor, every dtype


def _nchw(x, attrs):
    return x.transpose(0, 3, 1, 2) if attrs.get("data_format") == "NHWC" else x


def _back(y, attrs):
    return (
        xp.ascontiguousarray(y.transpose(0, 2, 3, 1)) if attrs.get("data_format") == "NHWC" else y
    )


def _regular(hw, attrs):
    """Geometry as a regular strided pool: (k, s, pads incl. ceil-mode overhang, out_hw), or None."""
    k, s, pads, out = pool_geometry(hw, attrs)
    if min(out) <= 0:
        raise ValueError(
            f"pool2d: the window {list(k)} (paddings {list(pads)}) does not fit the input "
            f"({hw[0]}x{hw[1]}): output would be {out[0]}x{out[1]}"
        )
    if attrs.get("adaptive") and not attrs.get("global_pooling"):
        if hw[0] % out[0] or hw[1] % out[1]:
            return None
        k = s = (hw[0] // out[0], hw[1] // out[1])
    pads = list(pads)
    for ax, (size, kk, st, o) in enumerate(zip(hw, k, s, out)):
        need = (o - 1) * st + kk - (size + pads[2 * ax] + pads[2 * ax + 1])
        if need > 0:
            pads[2 * ax + 1] += need
    return tuple(k), tuple(s), tuple(pads), tuple(out)


def _taps(k):
    return [(i, j) for i in range(k[0]) for j in range(k[1])]


def _tap_slice(i, j, s, out):
    return (
        slice(None),
        slice(None),
        slice(i, i + s[0] * (out[0] - 1) + 1, s[0]),
        slice(j, j + s[1] * (out[1] - 1) + 1, s[1]),
    )


def _count(hw, k, s, pads, out, exclusive, dtype):
    """Divisor of each output cell: real pixels in the window (exclusive) or kh*kw; NaN for a
    window of padding only (Fluid's 0/0, without a division-by-zero warning)."""
    if not exclusive:
        return xp.asarray(k[0] * k[1], dtype)
    counts = []
    for ax in range(2):
        start = xp.arange(out[ax]) * s[ax] - pads[2 * ax]
        end = xp.minimum(start + k[ax], hw[ax])
        counts.append(end - xp.maximum(start, 0))
    count = xp.outer(counts[0], counts[1]).astype(dtype)
    return xp.where(count == 0, xp.nan, count).astype(dtype)


def _adaptive_bounds(size, out):
    i = xp.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _pool_regular(x, attrs, geo):
    k, s, pads, out = geo
    is_max = attrs.get("pooling_type", "max") == "max"
    fill = -np.inf if is_max else 0.0
    win = windows(xp, pad_nchw(xp, x, pads, fill), k, s, (1, 1), out)
    y = win[:, :, 0, 0].copy()
    for i, j in _taps(k)[1:]:
        if is_max:
            xp.maximum(y, win[:, :, i, j], out=y)
        else:
            y += win[:, :, i, j]
    if not is_max:
        exclusive = attrs.get("exclusive", True) or attrs.get("adaptive", False)
        y /= _count(x.shape[2:], k, s, pads, out, exclusive, x.dtype)
    return y


def _window_matrix(size, out, dtype):
    """(out, size) 0/1 matrix: row i marks adaptive window i."""
    start, end = _adaptive_bounds(size, out)
    idx = xp.arange(size)
    return ((idx >= start[:, None]) & (idx < end[:, None])).astype(dtype)


def _adaptive_first_max(x, out):
    """Max of each uneven adaptive window and the (row, col) of its first maximum (row-major)."""
    hs, he = _adaptive_bounds(x.shape[2], out[0])
    ws, we = _adaptive_bounds(x.shape[3], out[1])
    # per row, per output column: the max over the window's columns and where it first occurs
    colmax = xp.stack([x[:, :, :, ws[b] : we[b]].max(axis=3) for b in range(out[1])], axis=3)
    firstcol = xp.stack(
        [x[:, :, :, ws[b] : we[b]].argmax(axis=3) + ws[b] for b in range(out[1])], axis=3
    )
    # per output row: the first row of the window holding the max, then that row's first column
    rows = xp.stack(
        [colmax[:, :, hs[a] : he[a]].argmax(axis=2) + hs[a] for a in range(out[0])], axis=2
    )
    y = xp.take_along_axis(colmax, rows, axis=2)
    cols = xp.take_along_axis(firstcol, rows, axis=2)
    return y, rows, cols


def _pool_adaptive(x, attrs):
    out = tuple(attrs["ksize"])
    if attrs.get("pooling_type", "max") == "max":
        return _adaptive_first_max(x, out)[0]
    ah, aw = (
        _window_matrix(x.shape[2], out[0], x.dtype),
        _window_matrix(x.shape[3], out[1], x.dtype),
    )
    return xp.matmul(xp.matmul(ah, x), aw.T) / xp.outer(ah.sum(1), aw.sum(1))


def _per_plane(fn, out_hw, *arrays):
    """``fn(*arrays)`` for NCHW arrays of one batch and channel count and a ``fn`` that works
    plane by plane: on the pool, in pieces of planes, when the arrays are contiguous (each a
    stack of ``N*C`` single-channel images then)."""
    n, c = arrays[0].shape[:2]
    if not _split.large(arrays[0]) or not all(a.flags.c_contiguous for a in arrays):
        return fn(*arrays)
    if n > 1:  # pieces of whole images: the result is an array of its own, not a reshaped view
        # (a gradient the next op may overwrite in place: relu_grad's donated input)
        return _split.by_rows(xp, fn, *arrays, out_shape=(n, c) + tuple(out_hw))
    planes = [a.reshape((n * c, 1) + a.shape[2:]) for a in arrays]
    out = _split.by_rows(xp, fn, *planes, out_shape=(n * c, 1) + tuple(out_hw))
    return out.reshape((n, c) + tuple(out_hw))


@kernel("pool2d", FLOATS)
def pool2d(inputs, attrs):
    x = _nchw(inputs["X"], attrs)
    geo = _regular(x.shape[2:], attrs)
    if geo is None:
        y = _pool_adaptive(x, attrs)
    else:
        y = _per_plane(lambda x: _pool_regular(x, attrs, geo), geo[3], x)
    if attrs.get("pooling_type", "max") == "max":
        xp.maximum(y, LOWEST, out=y)
    return {"Out": _back(y, attrs)}


def _max_grad_tiled(x, y, dy, k, dx):
    """Non-overlapping windows that tile ``x`` exactly: per window tap, one compare on a strided
    view and one multiply written straight into that tap's strided slice of ``dx``.

    Each window's first maximum in row-major order keeps its hit (Fluid's tie rule); later
    ties are cleared by a running "taken" mask. All passes run over output-sized arrays into
    preallocated buffers: no repeated ``y``/``dy``, no full-size boolean mask.
    """
    n, c, oh, ow = y.shape
    x6 = x.reshape(n, c, oh, k[0], ow, k[1])
    dx6 = dx.reshape(x6.shape)
    hit = xp.empty(y.shape, bool)
    taken = None
    for i, j in _taps(k):
        xp.equal(x6[:, :, :, i, :, j], y, out=hit)
        if taken is None:
            taken = hit.copy()
        else:
            xp.greater(hit, taken, out=hit)  # a hit not taken yet
            taken |= hit
        xp.multiply(hit, dy, out=dx6[:, :, :, i, :, j])


def _max_grad_tiles(x, y, dy, k):
    """:func:`_max_grad_tiled` of a contiguous NCHW batch into one new array (which a later op
    may overwrite in place), in pieces of whole images on the pool when it is large: each piece
    writes its own images, so no piece's result is copied."""
    dx = xp.empty(x.shape, x.dtype)
    n = x.shape[0]
    cuts = [(0, n)]
    if _split.large(x) and _parallel.parallel_threads() > 1:
        cuts = _parallel.pieces(n, x[0].size if n else 1)

    def run(lo: int, hi: int) -> None:
        _max_grad_tiled(x[lo:hi], y[lo:hi], dy[lo:hi], k, dx[lo:hi])

    _parallel.for_pieces(run, cuts)
    return dx


def _max_grad_regular(x, y, dy, geo):
    """Route each output gradient to the first maximum of its window (Fluid's tie rule)."""
    k, s, pads, out = geo
    xpad = pad_nchw(xp, x, pads, -np.inf)
    win = windows(xp, xpad, k, s, (1, 1), out)
    dxp = xp.zeros(xpad.shape, x.dtype)
    taken = xp.zeros(y.shape, bool)
    for i, j in _taps(k):
        hit = win[:, :, i, j] == y
        hit &= ~taken
        taken |= hit
        dxp[_tap_slice(i, j, s, out)] += xp.where(hit, dy, 0)
    return dxp


def _avg_grad_regular(x, dy, attrs, geo):
    k, s, pads, out = geo
    exclusive = attrs.get("exclusive", True) or attrs.get("adaptive", False)
    share = dy / _count(x.shape[2:], k, s, pads, out, exclusive, x.dtype)
    hp = (x.shape[2] + pads[0] + pads[1], x.shape[3] + pads[2] + pads[3])
    dxp = xp.zeros(x.shape[:2] + hp, x.dtype)
    for i, j in _taps(k):
        dxp[_tap_slice(i, j, s, out)] += share
    return dxp


def _scatter_to(x, rows, cols, dy):
    """Sum ``dy`` into a zero array shaped like ``x`` at per-(n, c) positions (rows, cols)."""
    n, c, h, w = x.shape
    base = (xp.arange(n * c) * (h * w)).reshape(n, c, 1, 1)
    flat = (base + rows * w + cols).ravel()
    return xp.bincount(flat, weights=dy.ravel(), minlength=x.size).astype(x.dtype).reshape(x.shape)


def _grad_adaptive(x, dy, attrs):
    out = tuple(attrs["ksize"])
    if attrs.get("pooling_type", "max") == "max":
        y, rows, cols = _adaptive_first_max(x, out)
        # Fluid 1.8.5 routes the gradient to the first input equal to the output, which is
        # floored at -FLT_MAX: a window of -inf (nothing reaches the floor) takes none
        return _scatter_to(x, rows, cols, xp.where(y >= LOWEST, dy, 0))
    ah, aw = (
        _window_matrix(x.shape[2], out[0], x.dtype),
        _window_matrix(x.shape[3], out[1], x.dtype),
    )
    share = dy / xp.outer(ah.sum(1), aw.sum(1))
    return xp.matmul(xp.matmul(ah.T, share), aw)


@kernel("pool2d_grad", FLOATS)
def pool2d_grad(inputs, attrs):
    x, dy = _nchw(inputs["X"], attrs), _nchw(inputs["Out@GRAD"], attrs)
    geo = _regular(x.shape[2:], attrs)
    if geo is None:
        return {"X@GRAD": _back(_grad_adaptive(x, dy, attrs), attrs)}
    pads, hw = geo[2], x.shape[2:]

    def crop(dxp):
        return dxp[:, :, pads[0] : pads[0] + hw[0], pads[2] : pads[2] + hw[1]]

    if attrs.get("pooling_type", "max") == "max":
        y = _nchw(inputs["Out"], attrs)
        k, s = geo[0], geo[1]
        if tuple(k) == tuple(s) and not any(pads) and hw == (y.shape[2] * k[0], y.shape[3] * k[1]):
            dx = _max_grad_tiles(x, y, dy, k)
        else:
            dx = _per_plane(lambda x, y, dy: crop(_max_grad_regular(x, y, dy, geo)), hw, x, y, dy)
    else:
        dx = _per_plane(lambda x, dy: crop(_avg_grad_regular(x, dy, attrs, geo)), hw, x, dy)
    return {"X@GRAD": _back(xp.ascontiguousarray(dx), attrs)}


@kernel("max_pool2d_with_index", FLOATS)
def max_pool2d_with_index(inputs, attrs):
    x = inputs["X"]
    n, c, h, w = x.shape
    attrs = dict(attrs, pooling_type="max")
    y = pool2d({"X": x}, attrs)["Out"]
    geo = _regular((h, w), attrs)
    if geo is None:
        _, rows, cols = _adaptive_first_max(x, tuple(attrs["ksize"]))
        mask = rows * w + cols
    else:
        k, s, pads, out = geo
        win = windows(xp, pad_nchw(xp, x, pads, -np.inf), k, s, (1, 1), out)
        mask = xp.full(y.shape, -1, np.int64)
        rows = xp.arange(out[0])[:, None] * s[0] - pads[0]
        cols = xp.arange(out[1])[None, :] * s[1] - pads[2]
        for i, j in reversed(_taps(k)):
            hit = win[:, :, i, j] == y
            mask = xp.where(hit, (rows + i) * w + cols + j, mask)
    # nothing above Fluid's -FLT_MAX start (a window of padding only): index -1
    return {"Out": y, "Mask": xp.where(y == LOWEST, -1, mask).astype(np.int32)}


@kernel("max_pool2d_with_index_grad", FLOATS)
def max_pool2d_with_index_grad(inputs, attrs):
    x, mask, dy = inputs["X"], inputs["Mask"], inputs["Out@GRAD"]
    w = x.shape[3]
    found = mask >= 0  # -1: a window with nothing in it, no gradient
    mask = xp.where(found, mask, 0)
    return {"X@GRAD": _scatter_to(x, mask // w, mask % w, xp.where(found, dy, 0))}
