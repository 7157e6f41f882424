"""The compiled loops of pool2d and max_pool2d_with_index over (planes, H, W) arrays.

Planes (N*C) run in parallel, each output cell scanning its window (clipped to the
image at the borders: padding never wins a max and adds nothing to a sum). The
gradients visit the output cells in reverse row-major order, which is the order in
which the numpy kernels add a window tap at a time (tap (i, j) of cell (oh, ow) is
pixel (oh*s + i, ow*s + j)), so overlapping windows sum the same floats in the same
order and max pooling's gradient equals numpy's bit for bit.
"""

from __future__ import annotations

import types

import numpy as np

from oar_kernels_numba._jit import jit, loop, prange
from oar_kernels_numba._limits import MAX_STRIDE, MAX_TAPS

_u = np.uint64  # an index known to be >= 0


@jit
def _inner(n, stride, pad, k, size):
    """(lo, hi): the outputs whose window lies wholly inside the image along one axis."""
    lo = min(n, -(-pad // stride))
    return lo, max(lo, min(n, (size - k + pad) // stride + 1))


@jit
def _max_cell(x, p, h0, w0, kh, kw):
    """Max of a window clipped to the image (padding is -inf; NaN wins, as np.maximum)."""
    m = x.dtype.type(-np.inf)
    for h in range(max(h0, 0), min(h0 + kh, x.shape[1])):
        for w in range(max(w0, 0), min(w0 + kw, x.shape[2])):
            v = x[p, h, w]
            m = v if (v > m or v != v) else m
    return m


@jit
def _sum_cell(x, p, h0, w0, kh, kw):
    s = x.dtype.type(0)
    for h in range(max(h0, 0), min(h0 + kh, x.shape[1])):
        for w in range(max(w0, 0), min(w0 + kw, x.shape[2])):
            s += x[p, h, w]
    return s


@jit
def _max_grad_cell(x, p, h0, w0, kh, kw, m, g, dx):
    """dx += g at the window's first tap equal to m (row-major; a padded tap is -inf)."""
    for h in range(h0, h0 + kh):
        for w in range(w0, w0 + kw):
            inside = 0 <= h < x.shape[1] and 0 <= w < x.shape[2]
            if (x[p, h, w] if inside else -np.inf) == m:
                if inside:
                    dx[p, h, w] += g
                return


@jit
def _avg_grad_cell(dx, p, h0, w0, kh, kw, share):
    for h in range(max(h0, 0), min(h0 + kh, dx.shape[1])):
        for w in range(max(w0, 0), min(w0 + kw, dx.shape[2])):
            dx[p, h, w] += share


@jit
def _max_fwd_tiled(x, p, kh, kw, y):
    """Windows that tile the plane (plain indices: LLVM vectorises this, 2x faster)."""
    for oh in range(y.shape[1]):
        for ow in range(y.shape[2]):
            m = x[p, kh * oh, kw * ow]
            for i in range(kh):
                for j in range(kw):
                    v = x[p, kh * oh + i, kw * ow + j]
                    m = v if (v > m or v != v) else m
            y[p, oh, ow] = m


@jit
def max_fwd_plane(x, p, kh, kw, sh, sw, pt, pl, y):
    nh, nw = y.shape[1], y.shape[2]
    if kh == sh and kw == sw and pt == 0 and pl == 0:
        if x.shape[1] == nh * kh and x.shape[2] == nw * kw:
            _max_fwd_tiled(x, p, kh, kw, y)
            return
    hlo, hhi = _inner(nh, sh, pt, kh, x.shape[1])
    wlo, whi = _inner(nw, sw, pl, kw, x.shape[2])
    for oh in range(nh):
        h0 = oh * sh - pt
        if hlo <= oh < hhi:
            hu = _u(h0)
            for ow in range(wlo, whi):
                wu = _u(ow * sw - pl)
                m = x[p, hu, wu]
                for i in range(kh):
                    for j in range(kw):
                        v = x[p, hu + _u(i), wu + _u(j)]
                        m = v if (v > m or v != v) else m
                y[p, oh, ow] = m
            span = (0, wlo, whi, nw)
        else:
            span = (0, nw, nw, nw)
        for ow in range(span[0], span[1]):
            y[p, oh, ow] = _max_cell(x, p, h0, ow * sw - pl, kh, kw)
        for ow in range(span[2], span[3]):
            y[p, oh, ow] = _max_cell(x, p, h0, ow * sw - pl, kh, kw)


@jit
def avg_fwd_plane(x, p, kh, kw, sh, sw, pt, pl, div, y):
    nh, nw = y.shape[1], y.shape[2]
    hlo, hhi = _inner(nh, sh, pt, kh, x.shape[1])
    wlo, whi = _inner(nw, sw, pl, kw, x.shape[2])
    for oh in range(nh):
        h0 = oh * sh - pt
        if hlo <= oh < hhi:
            hu = _u(h0)
            for ow in range(wlo, whi):
                wu = _u(ow * sw - pl)
                s = y.dtype.type(0)
                for i in range(kh):
                    for j in range(kw):
                        s += x[p, hu + _u(i), wu + _u(j)]
                y[p, oh, ow] = s / div[oh, ow]
            span = (0, wlo, whi, nw)
        else:
            span = (0, nw, nw, nw)
        for ow in range(span[0], span[1]):
            y[p, oh, ow] = _sum_cell(x, p, h0, ow * sw - pl, kh, kw) / div[oh, ow]
        for ow in range(span[2], span[3]):
            y[p, oh, ow] = _sum_cell(x, p, h0, ow * sw - pl, kh, kw) / div[oh, ow]


@jit
def _max_grad_tiled(x, y, dy, p, kh, kw, dx):
    """Windows that tile the plane: every pixel is written once (dy or 0), no zeroing pass."""
    for oh in range(y.shape[1]):
        hu = _u(oh * kh)
        for ow in range(y.shape[2]):
            wu = _u(ow * kw)
            m, g = y[p, oh, ow], dy[p, oh, ow]
            hit = False
            for i in range(kh):
                for j in range(kw):
                    first = (x[p, hu + _u(i), wu + _u(j)] == m) and not hit
                    dx[p, hu + _u(i), wu + _u(j)] = g if first else 0
                    hit = hit or first


@jit
def max_grad_plane(x, y, dy, p, kh, kw, sh, sw, pt, pl, dx):
    # output cells in reverse row-major order: the numpy kernel's tap-at-a-time order
    nh, nw = y.shape[1], y.shape[2]
    hlo, hhi = _inner(nh, sh, pt, kh, x.shape[1])
    wlo, whi = _inner(nw, sw, pl, kw, x.shape[2])
    if kh == sh and kw == sw and pt == 0 and pl == 0 and hhi == nh and whi == nw:
        if x.shape[1] == nh * kh and x.shape[2] == nw * kw:  # windows tile the image
            _max_grad_tiled(x, y, dy, p, kh, kw, dx)
            return
    dx[p] = 0
    for oh in range(nh - 1, -1, -1):
        h0 = oh * sh - pt
        inner = hlo <= oh < hhi
        right = whi if inner else 0
        for ow in range(nw - 1, right - 1, -1):
            _max_grad_cell(x, p, h0, ow * sw - pl, kh, kw, y[p, oh, ow], dy[p, oh, ow], dx)
        if not inner:
            continue
        hu = _u(h0)
        for ow in range(whi - 1, wlo - 1, -1):
            wu = _u(ow * sw - pl)
            m = y[p, oh, ow]
            at = kh * kw
            for t in range(kh * kw - 1, -1, -1):
                at = t if x[p, hu + _u(t // kw), wu + _u(t % kw)] == m else at
            if at < kh * kw:
                dx[p, hu + _u(at // kw), wu + _u(at % kw)] += dy[p, oh, ow]
        for ow in range(wlo - 1, -1, -1):
            _max_grad_cell(x, p, h0, ow * sw - pl, kh, kw, y[p, oh, ow], dy[p, oh, ow], dx)


@jit
def avg_grad_plane(dy, p, kh, kw, sh, sw, pt, pl, div, dx):
    nh, nw = dy.shape[1], dy.shape[2]
    hlo, hhi = _inner(nh, sh, pt, kh, dx.shape[1])
    wlo, whi = _inner(nw, sw, pl, kw, dx.shape[2])
    dx[p] = 0
    for oh in range(nh - 1, -1, -1):
        h0 = oh * sh - pt
        inner = hlo <= oh < hhi
        right = whi if inner else 0
        for ow in range(nw - 1, right - 1, -1):
            _avg_grad_cell(dx, p, h0, ow * sw - pl, kh, kw, dy[p, oh, ow] / div[oh, ow])
        if not inner:
            continue
        hu = _u(h0)
        for ow in range(whi - 1, wlo - 1, -1):
            wu = _u(ow * sw - pl)
            share = dy[p, oh, ow] / div[oh, ow]
            for i in range(kh):
                for j in range(kw):
                    dx[p, hu + _u(i), wu + _u(j)] += share
        for ow in range(wlo - 1, -1, -1):
            _avg_grad_cell(dx, p, h0, ow * sw - pl, kh, kw, dy[p, oh, ow] / div[oh, ow])


def _compile(kh: int, kw: int, sh: int, sw: int):
    """The four loops with kh, kw, sh, sw as compile-time constants (the plane bodies inline,
    a window's taps unroll, 3x faster than with run-time sizes; numba's disk cache keys
    closures by their constants)."""

    @loop
    def max_fwd(x, pt, pl, y):
        for p in prange(x.shape[0]):
            max_fwd_plane(x, p, kh, kw, sh, sw, pt, pl, y)

    @loop
    def avg_fwd(x, pt, pl, div, y):
        for p in prange(x.shape[0]):
            avg_fwd_plane(x, p, kh, kw, sh, sw, pt, pl, div, y)

    @loop
    def max_grad(x, y, dy, pt, pl, dx):
        for p in prange(x.shape[0]):
            max_grad_plane(x, y, dy, p, kh, kw, sh, sw, pt, pl, dx)

    @loop
    def avg_grad(dy, pt, pl, div, dx):
        for p in prange(dx.shape[0]):
            avg_grad_plane(dy, p, kh, kw, sh, sw, pt, pl, div, dx)

    return types.SimpleNamespace(
        max_fwd=max_fwd, avg_fwd=avg_fwd, max_grad=max_grad, avg_grad=avg_grad
    )


_GEOMETRIES: dict = {}


def geometry(kh: int, kw: int, sh: int, sw: int):
    """The loops of a small (kh, kw, sh, sw) window, compiled for these constants on first use
    (then served by the disk cache), or None for a window larger than MAX_TAPS / MAX_STRIDE."""
    if kh * kw > MAX_TAPS or max(sh, sw) > MAX_STRIDE:
        return None
    key = (kh, kw, sh, sw)
    got = _GEOMETRIES.get(key)
    if got is None:
        got = _GEOMETRIES[key] = _compile(*key)
    return got


@loop
def max_fwd_index(x, kh, kw, sh, sw, pt, pl, y, mask):
    """max_fwd and, in ``mask``, the flat index of each window's first maximum (row-major)."""
    hh, ww = x.shape[1], x.shape[2]
    for p in prange(x.shape[0]):
        for oh in range(y.shape[1]):
            h0 = oh * sh - pt
            hs, he = max(h0, 0), min(h0 + kh, hh)
            for ow in range(y.shape[2]):
                w0 = ow * sw - pl
                ws, we = max(w0, 0), min(w0 + kw, ww)
                m = -np.inf
                at = h0 * ww + w0  # a padded tap: only when the window holds nothing above -inf
                for h in range(hs, he):
                    for w in range(ws, we):
                        v = x[p, h, w]
                        if v > m or (v != v and m == m):
                            m = v
                            at = h * ww + w
                y[p, oh, ow] = m
                mask[p, oh, ow] = at


@loop
def index_grad(dy, mask, acc):
    """acc (float64, zeroed here) += dy at each flat index of ``mask``, in row-major order."""
    for p in prange(acc.shape[0]):
        for i in range(acc.shape[1]):
            acc[p, i] = 0.0
        for o in range(dy.shape[1]):
            acc[p, mask[p, o]] += dy[p, o]
