"""Winograd F(2x2, 5x5): 5x5 stride-1 convolutions and their gradients (``conv.py`` picks it).

Per batch chunk of :data:`LANES` images (the compiled loops of ``_winograd5.py`` vectorise
over the images of a chunk):

- forward: the input tiles ``V (36, C, tiles)``, 36 GEMMs ``U (O x C) @ V (C x tiles)``
  with ``U`` the transformed filter, then the output transform;
- input gradient: the same convolution of the output gradient (padded by ``4 - pad``) with
  the flipped, transposed filter;
- filter gradient: ``dU = sum over tiles of (A dY A^T) (.) V``, 36 GEMMs
  ``(O x tiles) @ (tiles x C)`` summed over batch chunks in fixed runs (the result does not
  depend on the thread count), then ``dW = G^T dU G``.

Batch chunks run on the kernel thread pool (``oar.api.parallel_for``), those of both
gradients in one pass (``_jobs.py``); a chunk's temporaries are per-thread scratch buffers
(``oar.api.scratch``, under the role names the other conv kernels use), reused from step to
step.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from oar.api import scratch

from oar_kernels_numba import _winograd5 as wg5
from oar_kernels_numba._jobs import Job, run, summed_job

#: images per batch chunk: the compiled loops' vector length (16 float32 lanes of AVX-512;
#: 8 and 32 measured 10-30% slower and about even on the MNIST CNN's second convolution)
LANES = 16
#: bytes of transformed tiles (input and output side) per batch chunk at most: fewer
#: images than LANES per chunk where a layer has many channels
CHUNK_BYTES = 8 << 20


def chunks(n: int, tiles: int, channels: int, itemsize: int):
    """``(start, stop)`` image ranges of :data:`LANES` images, fewer where the transformed
    tiles of that many would pass :data:`CHUNK_BYTES`."""
    per_image = 36 * tiles * channels * itemsize
    m = max(1, min(n, LANES, CHUNK_BYTES // max(per_image, 1)))
    return [(a, min(a + m, n)) for a in range(0, n, m)]


def _tiles(out_hw):
    return (out_hw[0] + 1) // 2, (out_hw[1] + 1) // 2


def _input_points(x, a: int, b: int, top: int, left: int, th: int, tw: int):
    """The transformed input tiles ``(36, C, TH, TW*m)`` of images ``a:b``."""
    c, m = x.shape[1], b - a
    xp = scratch(np, "planes", (c, 2 * th + 4, 2, (tw + 2) * m), x.dtype)
    wg5.to_planes(x, a, m, top, left, xp)
    v = scratch(np, "cols", (36, c, th, tw * m), x.dtype)
    wg5.input_transform(xp, m, v)
    return v


def conv_job(x, u, top: int, left: int, out_hw) -> Job:
    """Convolve ``x (N, C, H, W)``, placed at (``top``, ``left``) of a zero plane, with the
    transformed filter ``u (36, O, C)``: ``(N, O, *out_hw)``."""
    n, c = x.shape[:2]
    o = u.shape[1]
    th, tw = _tiles(out_hw)
    y = np.empty((n, o) + tuple(out_hw), x.dtype)

    def chunk(a: int, b: int) -> None:
        v = _input_points(x, a, b, top, left, th, tw)
        mt = scratch(np, "prod", (36, o, th, tw * (b - a)), x.dtype)
        np.matmul(u, v.reshape(36, c, -1), out=mt.reshape(36, o, -1))
        yt = scratch(np, "dy", (o, 2 * th, 2, tw * (b - a)), x.dtype)
        wg5.output_transform(mt, yt)
        wg5.from_planes(yt, a, b - a, y)

    parts = chunks(n, th * tw, c + o, x.itemsize)
    return Job([partial(chunk, a, b) for a, b in parts], lambda: y)


def filter_grad_job(x, dy, top: int, left: int) -> Job:
    """``dW (O, C, 5, 5)`` of the convolution of ``x`` (placed as in :func:`conv`) whose
    output gradient is ``dy (N, O, OH, OW)``."""
    n, c = x.shape[:2]
    o = dy.shape[1]
    th, tw = _tiles(dy.shape[2:])

    def term(a: int, b: int, out) -> None:
        v = _input_points(x, a, b, top, left, th, tw).reshape(36, c, -1)
        dyp = scratch(np, "dy", (o, 2 * th, 2, tw * (b - a)), x.dtype)
        wg5.to_planes(dy, a, b - a, 0, 0, dyp)
        mt = scratch(np, "prod", (36, o, th, tw * (b - a)), x.dtype)
        wg5.grad_transform(dyp, mt)
        np.matmul(mt.reshape(36, o, -1), v.transpose(0, 2, 1), out=out)

    parts = chunks(n, th * tw, c + o, x.itemsize)
    return summed_job(parts, term, (36, o, c), x.dtype, lambda du: wg5.filter_grad(du, x.dtype))


def conv2d(x, w, pads, out_hw):
    """``conv2d``'s output: ``x`` (contiguous NCHW) by ``w (O, C, 5, 5)``."""
    return run(conv_job(x, wg5.filter_points(w), pads[0], pads[2], out_hw))[0]


def input_grad_job(dy, w, pads, in_hw) -> Job:
    """dX: ``dy`` padded by ``4 - pad``, convolved with the flipped, transposed filter
    (paddings at most 4)."""
    u = wg5.filter_points(w, flipped=True, in_major=True)
    return conv_job(dy, u, 4 - pads[0], 4 - pads[2], in_hw)
