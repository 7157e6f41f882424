"""conv2d and its gradients by Winograd F(2x2, 3x3), for 3x3 stride-1 convolutions (and by
F(2x2, 5x5) for 5x5 ones: ``winograd5.py``).

The numpy kernel multiplies 9 * C-row column matrices (im2col); Winograd's minimal
filtering (Lavin and Gray, 2015) needs 16 products per 2x2 output block where the
direct convolution needs 36, so the GEMMs shrink 2.25 times, for the price of the
tile transforms, which the compiled loops of ``_winograd.py`` run close to memory speed:

- forward: 16 GEMMs ``V (tiles x C) @ U (C x O)`` per batch chunk (``U`` the transformed
  filter, ``V`` the input tiles), then the output transform;
- input gradient: the same convolution of the output gradient (padded by ``2 - pad``)
  with the flipped, transposed filter, whose transform is ``U`` with its points reversed;
- filter gradient: ``dU = sum over tiles of (A dY A^T) (.) V``, 16 GEMMs
  ``(O x tiles) @ (tiles x C)`` summed over batch chunks, then ``dW = G^T dU G``.

Float32 results differ from the numpy kernel's in the last bits (float tolerance: the
transforms add and subtract up to nine terms in the input's precision; the filter
transforms run in float64). Batch chunks are summed in a fixed order, so the filter
gradient does not depend on the thread count. A chunk's temporaries (planes, tiles, products)
are per-thread scratch buffers (``oar.api.scratch``), reused from call to call. Other convolutions (strides, dilations,
groups, NHWC, other filter sizes, few channels, small inputs) go to the kernel this
overrides.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from oar.api import resolve_paddings, scratch, with_one_blas_thread

from oar_kernels_numba import _winograd as wg
from oar_kernels_numba import winograd5
from oar_kernels_numba._fallback import Fallback
from oar_kernels_numba._jobs import Job, run, summed_job
from oar_kernels_numba._limits import SMALL

DTYPES = ("float32", "float64")
FLOAT_DTYPES = frozenset(np.dtype(t) for t in DTYPES)

#: input and output channels from which Winograd runs, each side and together (fewer: the
#: transforms cost more than the GEMMs they save: an RGB stem's 3 input channels; at batch 32
#: of 32x32 images, 8 -> 16 and 12 -> 12 channels ran 5-35% slower, 16 -> 16 10-15% faster)
MIN_CHANNELS = 8
MIN_CHANNEL_SUM = 32
#: ... for 5x5 filters (F(2x2, 5x5) saves more, and its loops vectorise over images)
MIN_CHANNELS_5X5 = 4
#: bytes of transformed tiles (input and output side) per batch chunk: they stay in cache
#: between the transform and the GEMM
CHUNK_BYTES = 1 << 20
#: tiles (GEMM rows) per batch chunk at least: with fewer, the GEMMs of deep layers (256
#: channels of 4x4) stream their 16 x C x O filter planes for little work (32 rows: the filter
#: gradient 2x slower); 64 rows cost 3-5% more than 128 there, and leave a batch of 32 two
#: chunks to share between threads
MIN_ROWS = 64


def _channels_ok(c: int, o: int, k: int) -> bool:
    if k == 5:
        return min(c, o) >= MIN_CHANNELS_5X5
    return min(c, o) >= MIN_CHANNELS and c + o >= MIN_CHANNEL_SUM


def _geometry(x, w, attrs):
    """``(pads, (OH, OW))`` when Winograd serves this convolution, else None."""
    if type(x) is not np.ndarray or type(w) is not np.ndarray or x.dtype not in FLOAT_DTYPES:
        return None
    if w.dtype != x.dtype or x.ndim != 4 or w.ndim != 4 or w.shape[2] not in (3, 5):
        return None
    if attrs["groups"] != 1 or attrs["data_format"] == "NHWC" or x.size < SMALL:
        return None
    c, o, k = x.shape[1], w.shape[0], w.shape[2]
    if w.shape[3] != k or c != w.shape[1] or not _channels_ok(c, o, k):
        return None
    if tuple(attrs["strides"]) != (1, 1):
        return None
    pads, d = resolve_paddings(
        attrs["paddings"], attrs["padding_algorithm"], x.shape[2:], (k, k), (1, 1),
        attrs["dilations"],
    )  # fmt: skip
    if tuple(d) != (1, 1) or min(pads) < 0:
        return None
    oh, ow = x.shape[2] + pads[0] + pads[1] - k + 1, x.shape[3] + pads[2] + pads[3] - k + 1
    if oh <= 0 or ow <= 0:
        return None
    return tuple(pads), (oh, ow)


def _chunks(n: int, tiles: int, channels: int, itemsize: int):
    """``(start, stop)`` image ranges holding about :data:`CHUNK_BYTES` of transformed tiles,
    and at least :data:`MIN_ROWS` tiles (each GEMM reads all of the 16 filter planes)."""
    per_image = 16 * tiles * channels * itemsize
    m = max(CHUNK_BYTES // max(per_image, 1), -(-MIN_ROWS // max(tiles, 1)))
    m = max(1, min(n, m))
    return [(a, min(a + m, n)) for a in range(0, n, m)]


def points(rows: int, cols: int, dtype, role: str | None = None):
    """``(full, planes)``: a C-contiguous ``(16, rows + 1, cols)`` array for the compiled loops
    and its ``(16, rows, cols)`` view for the GEMMs (the extra row keeps the planes from being a
    power of two apart: see ``_winograd.py``). With a ``role``, a scratch buffer (a chunk's
    temporary, this thread's only)."""
    shape = (16, rows + 1, cols)
    full = np.empty(shape, dtype) if role is None else scratch(np, role, shape, dtype)
    return full, full[:, :rows]


def _tiles(out_hw):
    return (out_hw[0] + 1) // 2, (out_hw[1] + 1) // 2


def filter_points(w, in_major: bool, flipped: bool = False):
    """``G w G^T`` point major: ``(16, C, O)`` when ``in_major``, else ``(16, O, C)``;
    ``flipped``: of the filters turned by 180 degrees."""
    o, c = w.shape[:2]
    flat, u = points(c, o, w.dtype) if in_major else points(o, c, w.dtype)
    wg.filter_transform(np.ascontiguousarray(w), flat, in_major, flipped)
    return u


def winograd_conv_job(x, u, top: int, left: int, out_hw) -> Job:
    """Convolve ``x (N, C, H, W)``, placed at (``top``, ``left``) of a zero plane, with the
    transformed filter ``u (16, C, O)``: ``(N, O, *out_hw)``. Batch chunks are the pieces
    (each writes its own images)."""
    n, c = x.shape[:2]
    o = u.shape[2]
    th, tw = _tiles(out_hw)
    y = np.empty((n, o) + tuple(out_hw), x.dtype)

    def chunk(a: int, b: int) -> None:
        v_full, v = _input_points(x, a, b, top, left, th, tw)
        m_full, mt = points((b - a) * th * tw, o, x.dtype, "prod")
        np.matmul(v, u, out=mt)
        yt = scratch(np, "dy", (b - a, 2 * th, 2 * tw, o), x.dtype)
        wg.output_transform(m_full, th, tw, yt)
        wg.to_nchw(yt, a, y)

    chunks = _chunks(n, th * tw, c + o, x.itemsize)
    return Job([partial(chunk, a, b) for a, b in chunks], lambda: y)


def winograd_conv(x, u, top: int, left: int, out_hw):
    """:func:`winograd_conv_job`'s result."""
    return run(winograd_conv_job(x, u, top, left, out_hw))[0]


def _input_points(x, a: int, b: int, top: int, left: int, th: int, tw: int):
    """The transformed input tiles of images ``a:b`` (see :func:`points`)."""
    xp = scratch(np, "planes", (b - a, 2 * th + 2, 2 * tw + 2, x.shape[1]), x.dtype)
    wg.to_nhwc(x, a, top, left, xp)
    v_full, v = points((b - a) * th * tw, x.shape[1], x.dtype, "cols")
    wg.input_transform(xp, th, tw, v_full)
    return v_full, v


def winograd_filter_grad_job(x, dy, top: int, left: int) -> Job:
    """``dW (O, C, 3, 3)`` of the convolution of ``x`` (placed as in :func:`winograd_conv`)
    whose output gradient is ``dy (N, O, OH, OW)``."""
    n, c = x.shape[:2]
    o = dy.shape[1]
    th, tw = _tiles(dy.shape[2:])

    def term(a: int, b: int, out) -> None:
        _, v = _input_points(x, a, b, top, left, th, tw)
        dyp = scratch(np, "dy", (b - a, 2 * th, 2 * tw, o), x.dtype)
        wg.to_nhwc(dy, a, 0, 0, dyp)
        m_full, mt = points((b - a) * th * tw, o, x.dtype, "prod")
        wg.grad_transform(dyp, th, tw, m_full)
        np.matmul(mt.transpose(0, 2, 1), v, out=out)

    def filter_grad(du):
        du_full, du_planes = points(o, c, x.dtype)  # planes apart by a spare row
        du_planes[...] = du
        dw = np.empty((o, c, 3, 3), x.dtype)
        wg.filter_grad(du_full, dw)
        return dw

    chunks = _chunks(n, th * tw, c + o, x.itemsize)
    return summed_job(chunks, term, (16, o, c), x.dtype, filter_grad)


def winograd_filter_grad(x, dy, top: int, left: int):
    """:func:`winograd_filter_grad_job`'s result."""
    return run(winograd_filter_grad_job(x, dy, top, left))[0]


def _grad_jobs3(wanted, x, w, dy, pads) -> dict:
    jobs = {}
    if "Filter@GRAD" in wanted:
        jobs["Filter@GRAD"] = winograd_filter_grad_job(x, dy, pads[0], pads[2])
    if "Input@GRAD" in wanted and max(pads) <= 2:
        # dX: dy padded by 2 - pad, convolved with the flipped, transposed filter
        u = filter_points(w, in_major=False, flipped=True)
        jobs["Input@GRAD"] = winograd_conv_job(dy, u, 2 - pads[0], 2 - pads[2], x.shape[2:])
    return jobs


def _grad_jobs5(wanted, x, w, dy, pads) -> dict:
    jobs = {}
    if "Filter@GRAD" in wanted:
        jobs["Filter@GRAD"] = winograd5.filter_grad_job(x, dy, pads[0], pads[2])
    if "Input@GRAD" in wanted and max(pads) <= 4:
        jobs["Input@GRAD"] = winograd5.input_grad_job(dy, w, pads, x.shape[2:])
    return jobs


class _Kernels:
    def __init__(self, device: str, priority: int) -> None:
        self.fb = {op: Fallback(op, device, priority) for op in ("conv2d", "conv2d_grad")}

    def conv2d(self, inputs, attrs):
        x, w = inputs["Input"], inputs["Filter"]
        geo = _geometry(x, w, attrs)
        if geo is None:
            return self.fb["conv2d"](x.dtype, inputs, attrs)
        pads, out_hw = geo
        if w.shape[2] == 5:
            return {"Output": winograd5.conv2d(np.ascontiguousarray(x), w, pads, out_hw)}
        u = filter_points(w, in_major=True)
        return {"Output": winograd_conv(np.ascontiguousarray(x), u, pads[0], pads[2], out_hw)}

    def conv2d_grad(self, inputs, attrs, wanted):
        x, w, dy = inputs["Input"], inputs["Filter"], inputs["Output@GRAD"]
        geo = _geometry(x, w, attrs)
        ok = geo is not None and type(dy) is np.ndarray and dy.dtype == x.dtype
        if not ok or dy.shape != (x.shape[0], w.shape[0]) + geo[1]:
            return self.fb["conv2d_grad"](x.dtype, inputs, attrs, wanted)
        pads = geo[0]
        x, dy = np.ascontiguousarray(x), np.ascontiguousarray(dy)
        jobs = (_grad_jobs5 if w.shape[2] == 5 else _grad_jobs3)(wanted, x, w, dy, pads)
        res = dict(zip(jobs, run(*jobs.values())))  # both gradients in one pass of the pool
        rest = set(wanted) - res.keys()
        if rest:
            res.update(self.fb["conv2d_grad"](x.dtype, inputs, attrs, frozenset(rest)))
        return res


def _one_blas_thread(fn):
    """``fn`` with OpenBLAS at one thread: the batch chunks share the cores through the kernel
    pool, and a GEMM on OpenBLAS's own threads leaves them spinning through the ops after it
    (at two threads on a busy machine the step's CPU time tripled)."""
    return lambda *args: with_one_blas_thread(fn, *args)


def register(registry, family: str, device: str, priority: int) -> None:
    k = _Kernels(device, priority)
    registry.register_kernel("conv2d", device, DTYPES, _one_blas_thread(k.conv2d), priority)
    registry.register_kernel(
        "conv2d_grad",
        device,
        DTYPES,
        _one_blas_thread(k.conv2d_grad),
        priority,
        wants_outputs=True,
    )
