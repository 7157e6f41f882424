"""The compiled loops of the Winograd F(2x2, 3x3) convolution (see ``conv.py``).

A 3x3 stride-1 convolution computes each 2x2 block of output from a 4x4 tile of input
(tiles overlap by two pixels) as ``Y = A^T [U (.) V] A``: ``V = B^T d B`` the input tile,
``U = G g G^T`` the filter, both 4x4, multiplied point by point: 16 products per channel
pair where the direct convolution needs 36. Summed over input channels, each of the 16
points is one GEMM ``(tiles x C) @ (C x O)``, which ``conv.py`` leaves to numpy (BLAS).

    B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]
    G   = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]
    A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]

Transformed arrays are point major, ``(16, rows, channels)``, point ``4 * u + v``; tiles run
image by image, then tile rows, then tile columns. The arrays may have rows beyond those
used (``conv.points``: planes a power of two apart make the 16 streams of a loop collide in
the cache's sets, six times slower). Indices are plain loop variables or their products:
with a flattened index (``t * C + c``) the loops ran two to four times slower.
The loops work on channels-last copies (``to_nhwc``) so that every innermost loop runs over
contiguous channels with one or two loads and one store: LLVM vectorises those (sixteen
loads and stores in one loop body it does not, as it cannot rule out that arrays overlap).
"""

from __future__ import annotations

import numpy as np

from oar_kernels_numba._jit import jit


@jit
def to_nhwc(x, b0, top, left, out):
    """``out (m, Hp, Wp, C)`` = images ``b0 : b0 + m`` of ``x (N, C, H, W)``, placed at row
    ``top`` and column ``left`` of a zero plane (``Hp``, ``Wp`` may crop the bottom / right)."""
    c_n, h, w = x.shape[1], x.shape[2], x.shape[3]
    m, hp, wp = out.shape[0], out.shape[1], out.shape[2]
    r0, r1 = max(0, -top), min(h, hp - top)
    q0, q1 = max(0, -left), min(w, wp - left)
    for b in range(m):
        for r in range(hp):
            inside = r0 <= r - top < r1
            for q in range(wp):
                if not inside or not q0 <= q - left < q1:
                    for c in range(c_n):
                        out[b, r, q, c] = 0
                elif c_n >= 64:  # many channels: gather along them (measured faster)
                    for c in range(c_n):
                        out[b, r, q, c] = x[b0 + b, c, r - top, q - left]
        if c_n < 64:  # few channels: contiguous runs along the rows
            for c in range(c_n):
                for r in range(r0, r1):
                    for q in range(q0, q1):
                        out[b, r + top, q + left, c] = x[b0 + b, c, r, q]


@jit
def to_nchw(yt, b0, y):
    """Images ``b0 : b0 + m`` of ``y (N, O, OH, OW)`` = ``yt (m, >=OH, >=OW, O)`` (cropped)."""
    o_n, oh, ow = y.shape[1], y.shape[2], y.shape[3]
    for b in range(yt.shape[0]):
        for o in range(o_n):
            for r in range(oh):
                for q in range(ow):
                    y[b0 + b, o, r, q] = yt[b, r, q, o]


@jit
def input_transform(xp, th, tw, v):
    """``v (16, >=m*th*tw, C)`` = ``B^T d B`` of every 4x4 tile (stride 2) of ``xp (m, Hp, Wp, C)``."""
    m, wp, c_n = xp.shape[0], xp.shape[2], xp.shape[3]
    a = np.empty((4, wp, c_n), xp.dtype)  # B^T applied down the columns of a row of tiles
    for b in range(m):
        for i in range(th):
            r = 2 * i
            for q in range(wp):
                for c in range(c_n):
                    a[0, q, c] = xp[b, r, q, c] - xp[b, r + 2, q, c]
                for c in range(c_n):
                    a[1, q, c] = xp[b, r + 1, q, c] + xp[b, r + 2, q, c]
                for c in range(c_n):
                    a[2, q, c] = xp[b, r + 2, q, c] - xp[b, r + 1, q, c]
                for c in range(c_n):
                    a[3, q, c] = xp[b, r + 1, q, c] - xp[b, r + 3, q, c]
            for j in range(tw):
                q = 2 * j
                t = (b * th + i) * tw + j
                for u in range(4):
                    for c in range(c_n):
                        v[4 * u, t, c] = a[u, q, c] - a[u, q + 2, c]
                    for c in range(c_n):
                        v[4 * u + 1, t, c] = a[u, q + 1, c] + a[u, q + 2, c]
                    for c in range(c_n):
                        v[4 * u + 2, t, c] = a[u, q + 2, c] - a[u, q + 1, c]
                    for c in range(c_n):
                        v[4 * u + 3, t, c] = a[u, q + 1, c] - a[u, q + 3, c]


@jit
def output_transform(mt, th, tw, yt):
    """``yt (m, 2*th, 2*tw, O)`` = ``A^T M A`` of every tile of ``mt (16, >=m*th*tw, O)``."""
    o_n = yt.shape[3]
    p = np.empty((8, o_n), mt.dtype)  # A^T applied down the columns: rows 0 and 1
    for b in range(yt.shape[0]):
        for i in range(th):
            r = 2 * i
            for j in range(tw):
                q = 2 * j
                t = (b * th + i) * tw + j
                for v in range(4):
                    for o in range(o_n):
                        p[v, o] = mt[v, t, o] + mt[4 + v, t, o] + mt[8 + v, t, o]
                    for o in range(o_n):
                        p[4 + v, o] = mt[4 + v, t, o] - mt[8 + v, t, o] - mt[12 + v, t, o]
                for h in range(2):
                    for o in range(o_n):
                        yt[b, r + h, q, o] = p[4 * h, o] + p[4 * h + 1, o] + p[4 * h + 2, o]
                    for o in range(o_n):
                        yt[b, r + h, q + 1, o] = p[4 * h + 1, o] - p[4 * h + 2, o] - p[4 * h + 3, o]


@jit
def grad_transform(dyp, th, tw, mt):
    """``mt (16, >=m*th*tw, O)`` = ``A D A^T`` of every 2x2 block ``D`` of ``dyp (m, 2*th, 2*tw, O)``
    (the output gradient carried back to the 4x4 points)."""
    o_n = dyp.shape[3]
    a = np.empty((4, 2, o_n), dyp.dtype)  # A applied down the columns of a block
    for b in range(dyp.shape[0]):
        for i in range(th):
            r = 2 * i
            for j in range(tw):
                t = (b * th + i) * tw + j
                for h in range(2):
                    q = 2 * j + h
                    for o in range(o_n):
                        a[0, h, o] = dyp[b, r, q, o]
                    for o in range(o_n):
                        a[1, h, o] = dyp[b, r, q, o] + dyp[b, r + 1, q, o]
                    for o in range(o_n):
                        a[2, h, o] = dyp[b, r, q, o] - dyp[b, r + 1, q, o]
                    for o in range(o_n):
                        a[3, h, o] = -dyp[b, r + 1, q, o]
                for u in range(4):
                    for o in range(o_n):
                        mt[4 * u, t, o] = a[u, 0, o]
                    for o in range(o_n):
                        mt[4 * u + 1, t, o] = a[u, 0, o] + a[u, 1, o]
                    for o in range(o_n):
                        mt[4 * u + 2, t, o] = a[u, 0, o] - a[u, 1, o]
                    for o in range(o_n):
                        mt[4 * u + 3, t, o] = -a[u, 1, o]


@jit
def filter_transform(w, u_out, in_major, flipped):
    """``G g G^T`` of every 3x3 filter of ``w (O, C, 3, 3)``, in float64, into ``u_out``:
    ``(16, >=C, O)`` when ``in_major`` (the forward GEMM's right operand), else ``(16, >=O, C)``.
    ``flipped``: of the filters turned by 180 degrees (the input gradient's), whose points are
    the filter's with rows and columns 0 and 3 swapped (``G`` reversed is ``G`` with rows 0
    and 3 swapped)."""
    o_n, c_n = w.shape[0], w.shape[1]
    e = np.empty(16, np.int64)  # point -> where it is stored
    for p in range(16):
        u, v = p // 4, p % 4
        e[p] = 4 * (3 - u if flipped and u % 3 == 0 else u) + (
            3 - v if flipped and v % 3 == 0 else v
        )
    h = np.empty(16)
    # rows of u_out outer, its contiguous columns inner (the other way, strided stores ran 2x slower)
    n1, n2 = (c_n, o_n) if in_major else (o_n, c_n)
    for i1 in range(n1):
        for i2 in range(n2):
            o, c = (i2, i1) if in_major else (i1, i2)
            for k in range(3):  # G down column k: points (0..3, k)
                g0, g1, g2 = np.float64(w[o, c, 0, k]), np.float64(w[o, c, 1, k]), w[o, c, 2, k]
                h[k], h[4 + k] = g0, 0.5 * (g0 + g1 + g2)
                h[8 + k], h[12 + k] = 0.5 * (g0 - g1 + g2), g2
            for u in range(4):  # G along row u
                a0, a1, a2 = h[4 * u], h[4 * u + 1], h[4 * u + 2]
                h[4 * u + 1], h[4 * u + 2], h[4 * u + 3] = (
                    0.5 * (a0 + a1 + a2),
                    0.5 * (a0 - a1 + a2),
                    a2,
                )
            for p in range(16):
                u_out[e[p], i1, i2] = h[p]


@jit
def filter_grad(du, dw):
    """``dw (O, C, 3, 3)`` = ``G^T dU G`` for the point-major filter gradient ``du (16, >=O, C)``."""
    o_n, c_n = dw.shape[0], dw.shape[1]
    s = np.empty((3, 4))
    for o in range(o_n):
        for c in range(c_n):
            for v in range(4):  # G^T down each column: s[k, v] = sum_u G[u, k] du[4u + v]
                d0, d1, d2, d3 = du[v, o, c], du[4 + v, o, c], du[8 + v, o, c], du[12 + v, o, c]
                s[0, v] = np.float64(d0) + 0.5 * (d1 + d2)
                s[1, v] = 0.5 * (np.float64(d1) - d2)
                s[2, v] = 0.5 * (np.float64(d1) + d2) + d3
            for k in range(3):
                dw[o, c, k, 0] = s[k, 0] + 0.5 * (s[k, 1] + s[k, 2])
                dw[o, c, k, 1] = 0.5 * (s[k, 1] - s[k, 2])
                dw[o, c, k, 2] = 0.5 * (s[k, 1] + s[k, 2]) + s[k, 3]
