"""The compiled loops of the Winograd F(2x2, 5x5) convolution (see ``winograd5.py``).

Each 2x2 block of output comes from a 6x6 tile of input (tiles overlap by four pixels) as
``Y = A^T [U (.) V] A`` with ``V = B^T d B``, ``U = G g G^T``: 36 products per channel pair
where the direct convolution needs 100. The interpolation points are 0, 1, -1, 2, -2 and
infinity (those of F(4, 3), whose ``B^T`` this shares):

    B^T = [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
           [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]]
    G   = [[1/4, 0, 0, 0, 0], -1/6 [1, 1, 1, 1, 1], -1/6 [1, -1, 1, -1, 1],
           1/24 [1, 2, 4, 8, 16], 1/24 [1, -2, 4, -8, 16], [0, 0, 0, 0, 1]]
    A^T = [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 1]]

Unlike ``_winograd.py``'s channels-last loops (which suit the many channels of a ResNet), these
keep the images of a batch chunk innermost: planes ``(C, H, W, m)`` and points
``(36, C, TH, TW, m)``, point ``6 * u + v``. Every innermost loop runs over the ``m`` images,
whatever the channel count (the 1 or 20 channels of an MNIST network vectorised badly along
channels: 16-lane AVX-512 vectors and a scalar remainder), and its body does one whole
one-dimensional transform, with its loads, arithmetic and stores in registers. Constants come
in the arrays' dtype (a Python number would promote float32 to float64). The filter
transforms are small and run in float64 with numpy (:data:`G`).
"""

from __future__ import annotations

import numpy as np

from oar_kernels_numba._jit import jit

#: the filter transform (float64)
G = np.array(
    [
        [1 / 4, 0, 0, 0, 0],
        [-1 / 6, -1 / 6, -1 / 6, -1 / 6, -1 / 6],
        [-1 / 6, 1 / 6, -1 / 6, 1 / 6, -1 / 6],
        [1 / 24, 2 / 24, 4 / 24, 8 / 24, 16 / 24],
        [1 / 24, -2 / 24, 4 / 24, -8 / 24, 16 / 24],
        [0, 0, 0, 0, 1],
    ]
)


def filter_points(w, flipped: bool = False, in_major: bool = False):
    """``G g G^T`` of every 5x5 filter of ``w (O, C, 5, 5)``, computed in float64, in ``w``'s
    dtype: ``(36, O, C)``, or ``(36, C, O)`` when ``in_major``; ``flipped``: of the filters
    turned by 180 degrees."""
    g = w[:, :, ::-1, ::-1] if flipped else w
    u = (G @ g.astype(np.float64) @ G.T).reshape(w.shape[0], w.shape[1], 36)
    return np.ascontiguousarray(u.transpose(2, 1, 0) if in_major else u.transpose(2, 0, 1), w.dtype)


def filter_grad(du, dtype):
    """``dW (O, C, 5, 5)`` = ``G^T dU G`` of the point-major filter gradient ``du (36, O, C)``."""
    o_n, c_n = du.shape[1:]
    d = du.astype(np.float64).transpose(1, 2, 0).reshape(o_n, c_n, 6, 6)
    return (G.T @ d @ G).astype(dtype)


@jit
def _constants(a):
    k = np.empty(3, a.dtype)
    k[0], k[1], k[2] = 2, 4, 5
    return k[0], k[1], k[2]


@jit
def to_planes(x, b0, m, top, left, out):
    """``out (C, Hp, 2, J*m)`` = images ``b0 : b0 + m`` of ``x (N, C, H, W)``, placed at row
    ``top`` and column ``left`` of a zero plane (cropped at the bottom / right), even and odd
    columns apart: ``out[c, r, s, j*m + b]`` is column ``2j + s`` of row ``r`` of image ``b``
    (tiles start at even columns, so a tap of a row of tiles is one contiguous run)."""
    c_n, h, w = x.shape[1], x.shape[2], x.shape[3]
    hp, jn = out.shape[1], out.shape[3] // m
    for c in range(c_n):
        for r in range(hp):
            rr = r - top
            for s in range(2):
                for j in range(jn):
                    q = 2 * j + s - left
                    if 0 <= rr < h and 0 <= q < w:
                        for b in range(m):
                            out[c, r, s, j * m + b] = x[b0 + b, c, rr, q]
                    else:
                        for b in range(m):
                            out[c, r, s, j * m + b] = 0


@jit
def from_planes(yt, b0, m, y):
    """Images ``b0 : b0 + m`` of ``y (N, O, OH, OW)`` = ``yt (O, >=OH, 2, J*m)`` (the layout
    of :func:`to_planes`, cropped)."""
    o_n, oh, ow = y.shape[1], y.shape[2], y.shape[3]
    for b in range(m):
        for o in range(o_n):
            for r in range(oh):
                for q in range(ow):
                    y[b0 + b, o, r, q] = yt[o, r, q % 2, (q // 2) * m + b]


@jit
def input_transform(xp, m, v):
    """``v (36, C, TH, TW*m)`` = ``B^T d B`` of every 6x6 tile (stride 2) of the planes
    ``xp (C, >=2*TH+4, 2, >=(TW+2)*m)`` (see :func:`to_planes`): ``B^T`` along the rows into
    ``h``, then down the columns of each row of tiles, each pass one loop over tiles and
    images."""
    c_n, th, tn = v.shape[1], v.shape[2], v.shape[3]
    k2, k4, k5 = _constants(xp)
    h = np.empty((xp.shape[1], 6, tn), xp.dtype)
    for c in range(c_n):
        for r in range(2 * th + 4):
            for n in range(tn):
                d0, d1, d2 = xp[c, r, 0, n], xp[c, r, 1, n], xp[c, r, 0, n + m]
                d3, d4, d5 = xp[c, r, 1, n + m], xp[c, r, 0, n + 2 * m], xp[c, r, 1, n + 2 * m]
                s0, s1 = d4 - k4 * d2, d3 - k4 * d1
                s2, s3 = d4 - d2, k2 * (d3 - d1)
                h[r, 0, n] = k4 * d0 - k5 * d2 + d4
                h[r, 1, n] = s0 + s1
                h[r, 2, n] = s0 - s1
                h[r, 3, n] = s2 + s3
                h[r, 4, n] = s2 - s3
                h[r, 5, n] = k4 * d1 - k5 * d3 + d5
        for i in range(th):
            r = 2 * i
            for w in range(6):
                for n in range(tn):
                    d0, d1, d2 = h[r, w, n], h[r + 1, w, n], h[r + 2, w, n]
                    d3, d4, d5 = h[r + 3, w, n], h[r + 4, w, n], h[r + 5, w, n]
                    s0, s1 = d4 - k4 * d2, d3 - k4 * d1
                    s2, s3 = d4 - d2, k2 * (d3 - d1)
                    v[w, c, i, n] = k4 * d0 - k5 * d2 + d4
                    v[6 + w, c, i, n] = s0 + s1
                    v[12 + w, c, i, n] = s0 - s1
                    v[18 + w, c, i, n] = s2 + s3
                    v[24 + w, c, i, n] = s2 - s3
                    v[30 + w, c, i, n] = k4 * d1 - k5 * d3 + d5


@jit
def output_transform(mt, yt):
    """``yt (O, 2*TH, 2, TW*m)`` (the layout of :func:`to_planes`) = ``A^T M A`` of every tile
    of ``mt (36, O, TH, TW*m)``: along each axis,
    ``(m0..m5) -> (m0 + m1 + m2 + m3 + m4, m1 - m2 + 2 (m3 - m4) + m5)``."""
    o_n, th, tn = mt.shape[1], mt.shape[2], mt.shape[3]
    k2 = _constants(mt)[0]
    p = np.empty((2, 6, tn), mt.dtype)  # A^T applied down the columns
    for o in range(o_n):
        for i in range(th):
            for v in range(6):
                for n in range(tn):
                    m0, m1, m2 = mt[v, o, i, n], mt[6 + v, o, i, n], mt[12 + v, o, i, n]
                    m3, m4, m5 = mt[18 + v, o, i, n], mt[24 + v, o, i, n], mt[30 + v, o, i, n]
                    p[0, v, n] = m0 + m1 + m2 + m3 + m4
                    p[1, v, n] = m1 - m2 + k2 * (m3 - m4) + m5
            for h in range(2):
                for n in range(tn):
                    m0, m1, m2 = p[h, 0, n], p[h, 1, n], p[h, 2, n]
                    m3, m4, m5 = p[h, 3, n], p[h, 4, n], p[h, 5, n]
                    yt[o, 2 * i + h, 0, n] = m0 + m1 + m2 + m3 + m4
                    yt[o, 2 * i + h, 1, n] = m1 - m2 + k2 * (m3 - m4) + m5


@jit
def grad_transform(dyp, mt):
    """``mt (36, O, TH, TW*m)`` = ``A D A^T`` of every 2x2 block ``D`` of the output gradient's
    planes ``dyp (O, >=2*TH, 2, >=TW*m)`` (see :func:`to_planes`), carried back to the 6x6
    points: along each axis, ``(d0, d1) -> (d0, d0 + d1, d0 - d1, d0 + 2 d1, d0 - 2 d1, d1)``."""
    o_n, th, tn = mt.shape[1], mt.shape[2], mt.shape[3]
    k2 = _constants(mt)[0]
    a = np.empty((6, 2, tn), mt.dtype)  # A applied down the two columns of the blocks
    for o in range(o_n):
        for i in range(th):
            for s in range(2):
                for n in range(tn):
                    d0, d1 = dyp[o, 2 * i, s, n], dyp[o, 2 * i + 1, s, n]
                    a[0, s, n] = d0
                    a[1, s, n] = d0 + d1
                    a[2, s, n] = d0 - d1
                    a[3, s, n] = d0 + k2 * d1
                    a[4, s, n] = d0 - k2 * d1
                    a[5, s, n] = d1
            for u in range(6):
                p = 6 * u
                for n in range(tn):
                    d0, d1 = a[u, 0, n], a[u, 1, n]
                    mt[p, o, i, n] = d0
                    mt[p + 1, o, i, n] = d0 + d1
                    mt[p + 2, o, i, n] = d0 - d1
                    mt[p + 3, o, i, n] = d0 + k2 * d1
                    mt[p + 4, o, i, n] = d0 - k2 * d1
                    mt[p + 5, o, i, n] = d1
