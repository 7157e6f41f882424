"""numpy kernels for conv2d, depthwise_conv2d and conv2d_transpose: im2col + one GEMM each way."""

from __future__ import annotations

import numpy as np
from oar.api import resolve_paddings, with_one_blas_thread

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._im2col import (
    col2im_add,
    col2im_batched,
    grid_windows,
    im2col,
    pad_nchw,
)
from oar_kernels_cpu.kernels._parallel import parallel_for
from oar_kernels_cpu.kernels._scratch import scratch

xp = array_module(__name__)


def _to_nchw(x, attrs):
    return x.transpose(0, 3, 1, 2) if attrs["data_format"] == "NHWC" else x


def _from_nchw(y, attrs):
    return xp.ascontiguousarray(y.transpose(0, 2, 3, 1)) if attrs["data_format"] == "NHWC" else y


def _geometry(x, w, attrs):
    """Paddings, dilations and output size of a forward convolution of ``x`` (NCHW) by ``w``."""
    k = w.shape[2:]
    s = attrs["strides"]
    pads, d = resolve_paddings(
        attrs["paddings"], attrs["padding_algorithm"], x.shape[2:], k, s, attrs["dilations"]
    )
    oh = (x.shape[2] + pads[0] + pads[1] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    ow = (x.shape[3] + pads[2] + pads[3] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    if oh <= 0 or ow <= 0:
        raise ValueError(
            f"the filter ({k[0]}x{k[1]}, dilations {list(d)}) does not fit the padded input "
            f"({x.shape[2]}x{x.shape[3]}, paddings {list(pads)}): output would be {oh}x{ow}"
        )
    return pads, d, (oh, ow)


# Bytes of column matrix per batch chunk. im2col of a whole batch is large (25x the input for
# a 5x5 filter: 25 MB for the seed CNN's second conv) and streams through memory twice, once
# written by the copy and once read by the GEMM; a chunk of a few MB stays in cache between the
# two (3 MiB measured best for the ResNet-18-style step here, equal to 1.5 MiB for the seed CNN).
CHUNK_BYTES = 3 << 20
# Output pixels per image from which a GEMM per image is wide enough to run well: below it the
# columns of a batch chunk are laid out channel major and multiplied in one GEMM.
IMAGE_MAJOR_PIXELS = 512
# ... and from which a stride-1, unpadded 1x1 convolution multiplies the input in place.
GEMM_1X1_PIXELS = 256


def wide_grid(cols_per_group: int, out_per_group: int) -> bool:
    """Whether columns over the full padded width pay off: when the column copy (C*KH*KW rows)
    dwarfs the output (O rows) that the wider grid adds GEMM work to and must be cropped from."""
    return cols_per_group >= 4 * out_per_group


def batch_chunks(n: int, per_image_bytes: int):
    """Split ``range(n)`` into ``(start, stop)`` chunks of at most :data:`CHUNK_BYTES` of
    columns, as few as that allows and of even sizes (they share the cores: 32 + 32 images
    rather than 35 + 29)."""
    b = max(1, min(n, CHUNK_BYTES // max(per_image_bytes, 1)))
    k = -(-n // b)  # chunks
    return [(n * i // k, n * (i + 1) // k) for i in range(k)]


def column_view(x, pads, k, s, d, out_hw, kg, og):
    """The read-only view ``(C, KH, KW, N, OH, GW)`` the column matrices are copied from: channel
    major, so that a batch chunk's columns are one ``(C*KH*KW, m*OH*GW)`` matrix and a GEMM
    covers the whole chunk. The grid spans the padded width (``GW > OW``, see ``grid_windows``)
    where that makes the copy cheaper and adds at most an eighth to the GEMM."""
    wp = x.shape[3] + pads[2] + pads[3]
    full = wide_grid(kg, og) and 8 * (wp - out_hw[1]) <= out_hw[1]
    win = grid_windows(xp, x, pads, k, s, d, out_hw, full)
    return win.transpose(1, 2, 3, 0, 4, 5)


def _columns(win, a, b):
    """Copy images ``a:b`` of a column view into the ``cols`` scratch buffer."""
    cols = scratch(xp, "cols", win.shape[:3] + (b - a,) + win.shape[4:], win.dtype)
    xp.copyto(cols, win[:, :, :, a:b])
    return cols


def conv_nchw(x, w_mat, k, s, d, pads, out_hw):
    """Convolve NCHW ``x`` with ``w_mat`` (G, O/G, C/G*KH*KW): im2col and GEMMs, batch chunk by
    batch chunk. A 1x1 convolution is a GEMM per image straight from the input."""
    n = x.shape[0]
    g, og, kg = w_mat.shape
    oh, ow = out_hw
    # an array of its own (not a reshaped view): the next op may write into it in place
    res = xp.empty((n, g * og, oh, ow), dtype=np.result_type(x.dtype, w_mat.dtype))
    out = res.reshape(n, g, og, oh, ow)
    if tuple(k) == (1, 1) and tuple(s) == (1, 1) and not any(pads) and oh * ow >= GEMM_1X1_PIXELS:
        xp.matmul(w_mat, x.reshape(n, g, kg, oh * ow), out=out.reshape(n, g, og, oh * ow))
    elif oh * ow >= IMAGE_MAJOR_PIXELS or kg < og:
        _conv_image_major(x, w_mat, k, s, d, pads, out)
    else:
        _conv_channel_major(x, w_mat, k, s, d, pads, out)
    return res


def _each_chunk(n: int, per_image_bytes: int, fn) -> None:
    """``fn(a, b)`` for every batch chunk, on the kernel thread pool (chunks are independent)."""
    chunks = batch_chunks(n, per_image_bytes)
    parallel_for(lambda i: fn(*chunks[i]), len(chunks))


def _conv_image_major(x, w_mat, k, s, d, pads, out):
    """Columns ``(m, C, KH, KW, OH, GW)``, one GEMM per image and group, written straight into the
    output: best when an image has many output pixels, or the output is wider than the columns."""
    g, og, kg = w_mat.shape
    oh, ow = out.shape[3:]
    win = grid_windows(xp, x, pads, k, s, d, (oh, ow), wide_grid(kg, og))
    gw = win.shape[5]

    def chunk(a, b):
        m = b - a
        cols = scratch(xp, "cols", (m,) + win.shape[1:], x.dtype)
        xp.copyto(cols, win[a:b])
        dst = out[a:b] if gw == ow else scratch(xp, "prod", (m, g, og, oh, gw), out.dtype)
        xp.matmul(w_mat, cols.reshape(m, g, kg, oh * gw), out=dst.reshape(m, g, og, oh * gw))
        if gw != ow:
            out[a:b] = dst[..., :ow]

    _each_chunk(x.shape[0], g * kg * oh * gw * x.itemsize, chunk)


def _conv_channel_major(x, w_mat, k, s, d, pads, out):
    """Columns ``(C, KH, KW, m, OH, GW)``: one GEMM per batch chunk and group, whose product is then
    moved into the NCHW output: best for small images, where a GEMM per image is too narrow."""
    g, og, kg = w_mat.shape
    oh, ow = out.shape[3:]
    win = column_view(x, pads, k, s, d, (oh, ow), kg, og)
    gw = win.shape[5]

    def chunk(a, b):
        m = b - a
        cols = _columns(win, a, b)
        prod = scratch(xp, "prod", (g, og, m, oh, gw), out.dtype)
        xp.matmul(w_mat, cols.reshape(g, kg, m * oh * gw), out=prod.reshape(g, og, m * oh * gw))
        out[a:b] = prod[..., :ow].transpose(2, 0, 1, 3, 4)

    _each_chunk(x.shape[0], g * kg * oh * gw * x.itemsize, chunk)


def _conv(inputs, attrs):
    x, w = _to_nchw(inputs["Input"], attrs), inputs["Filter"]
    g = attrs["groups"]
    pads, d, out_hw = _geometry(x, w, attrs)
    y = conv_nchw(
        x, w.reshape(g, w.shape[0] // g, -1), w.shape[2:], attrs["strides"], d, pads, out_hw
    )
    return {"Output": _from_nchw(y, attrs)}


def _dy_columns(dy, a, b, g, gw):
    """dy of images ``a:b`` channel major ``(G, O/G, m*OH*GW)``, zero in the grid's extra columns."""
    m, (oc, oh, ow) = b - a, dy.shape[1:]
    dyb = scratch(xp, "dy", (oc, m, oh, gw), dy.dtype)
    if gw != ow:
        dyb[..., ow:] = 0
    dyb[..., :ow] = dy[a:b].transpose(1, 0, 2, 3)
    return dyb.reshape(g, oc // g, m * oh * gw)


# The filter gradient sums over batch chunks in this many fixed runs of chunks (each summed in
# order, then the runs in order), so that its value does not depend on the thread count.
GRAD_PARTS = 4


#: a filter gradient this small (rows x columns at most, per group: the MNIST CNN's
#: one-channel 5x5 layer, 25 x 20) sums its product over the chunk's pixels in blocks of
#: DW_K_BLOCK: OpenBLAS runs such a product at K = 25088 at half its speed at K <= 1536
#: (0.56 against 0.30 ms here)
DW_SMALL = 64 * 64
DW_K_BLOCK = 1024


def _add_matmul(acc, a, b) -> None:
    """``acc += a @ b`` (stacked), ``a (G, M, K)``, ``b (G, K, N)``; in blocks along ``K``
    when ``M * N`` is at most :data:`DW_SMALL`."""
    k = a.shape[2]
    step = DW_K_BLOCK if a.shape[1] * b.shape[2] <= DW_SMALL else k
    tmp = scratch(xp, "dw", acc.shape, acc.dtype)
    for k0 in range(0, k, max(step, 1)):
        acc += xp.matmul(a[:, :, k0 : k0 + step], b[:, k0 : k0 + step], out=tmp)


def _filter_grad(x, dy, w, g, s, d, pads, out_hw):
    """dW^T = cols (C*KH*KW, N*L) @ dy^T (N*L, O) per group, summed over batch chunks
    (the tall-skinny orientation is the faster one for BLAS)."""
    n, oc = x.shape[0], w.shape[0]
    oh = out_hw[0]
    kg = w[0].size  # C/G * KH * KW
    dtype = np.result_type(x.dtype, dy.dtype)
    win = column_view(x, pads, w.shape[2:], s, d, out_hw, kg, oc // g)
    gw = win.shape[5]
    chunks = batch_chunks(n, g * kg * oh * gw * x.itemsize)
    runs = [chunks[i::GRAD_PARTS] for i in range(min(GRAD_PARTS, len(chunks)))]
    sums = [None] * len(runs)

    def run(r):
        for a, b in runs[r]:
            cols = _columns(win, a, b).reshape(g, kg, -1)
            dyc = _dy_columns(dy, a, b, g, gw).transpose(0, 2, 1)
            if sums[r] is None:
                sums[r] = xp.zeros((g, kg, oc // g), dtype)
            _add_matmul(sums[r], cols, dyc)

    parallel_for(run, len(runs))
    if not sums:  # empty batch
        return xp.zeros(w.shape, dtype)
    dwt = sums[0]
    for part in sums[1:]:
        dwt += part
    return xp.ascontiguousarray(dwt.transpose(0, 2, 1)).reshape(w.shape)


def _input_grad(x_shape, dy, w, g, s, d, pads):
    """dX. Stride 1: a convolution of the padded dy with the flipped, transposed filter
    (im2col + GEMM). Otherwise: per batch chunk, GEMMs to columns, then col2im."""
    n, c, h, wd = x_shape
    oc, cg, kh, kw = w.shape
    og = oc // g
    full = [d[0] * (kh - 1), d[0] * (kh - 1), d[1] * (kw - 1), d[1] * (kw - 1)]
    back = [f - p for f, p in zip(full, pads)]
    if tuple(s) == (1, 1) and min(back) >= 0:
        wf = w.reshape(g, og, cg, kh, kw)[:, :, :, ::-1, ::-1].transpose(0, 2, 1, 3, 4)
        wf = xp.ascontiguousarray(wf).reshape(g, cg, og * kh * kw)
        return conv_nchw(dy, wf, (kh, kw), (1, 1), d, back, (h, wd))
    hp, wp = h + pads[0] + pads[1], wd + pads[2] + pads[3]
    oh, ow = dy.shape[2:]
    wt = w.reshape(g, og, -1).transpose(0, 2, 1)  # (G, C/G*KH*KW, O/G)
    dx = xp.empty((n, c, h, wd), dtype=np.result_type(dy.dtype, w.dtype))
    image_major = oh * ow >= IMAGE_MAJOR_PIXELS or cg * kh * kw < og  # a GEMM per image

    def chunk(a, b):
        m = b - a
        if image_major:
            cols = scratch(xp, "cols", (m, g, cg * kh * kw, oh * ow), dx.dtype)
            xp.matmul(wt, dy[a:b].reshape(m, g, og, oh * ow), out=cols)
            cols = cols.reshape(m, c, kh, kw, oh, ow)
            acc = scratch(xp, "acc", (m, c, hp, wp), dx.dtype)
        else:
            cols = scratch(xp, "cols", (g, cg * kh * kw, m * oh * ow), dx.dtype)
            xp.matmul(wt, _dy_columns(dy, a, b, g, ow), out=cols)
            cols = cols.reshape(c, kh, kw, m, oh, ow).transpose(0, 3, 1, 2, 4, 5)
            acc = scratch(xp, "acc", (c, m, hp, wp), dx.dtype)
        acc[...] = 0
        col2im_add(acc, cols, s, d)
        crop = acc[:, :, pads[0] : pads[0] + h, pads[2] : pads[2] + wd]
        dx[a:b] = crop if image_major else crop.transpose(1, 0, 2, 3)

    _each_chunk(n, c * kh * kw * oh * ow * dy.itemsize, chunk)
    return dx


def _conv_grad(inputs, attrs, wanted):
    x, w = _to_nchw(inputs["Input"], attrs), inputs["Filter"]
    dy = _to_nchw(inputs["Output@GRAD"], attrs)
    g, s = attrs["groups"], attrs["strides"]
    pads, d, out_hw = _geometry(x, w, attrs)
    res = {}
    if "Filter@GRAD" in wanted:
        res["Filter@GRAD"] = _filter_grad(x, dy, w, g, s, d, pads, out_hw)
    if "Input@GRAD" in wanted:
        res["Input@GRAD"] = _from_nchw(_input_grad(x.shape, dy, w, g, s, d, pads), attrs)
    return res


def _conv_kernel(inputs, attrs):
    # OpenBLAS at one thread: the batch chunks share the cores through the kernel pool, and a
    # GEMM on OpenBLAS's own threads (a batch of one chunk) leaves them spinning for a while
    return with_one_blas_thread(_conv, inputs, attrs)


def _conv_grad_kernel(inputs, attrs, wanted):
    return with_one_blas_thread(_conv_grad, inputs, attrs, wanted)


for _name in ("conv2d", "depthwise_conv2d"):
    kernel(_name, FLOATS)(_conv_kernel)
    kernel(_name + "_grad", FLOATS, wants_outputs=True)(_conv_grad_kernel)


def _transpose_geometry(x, w, attrs):
    k = w.shape[2:]
    s = attrs["strides"]
    pads, d = resolve_paddings(
        attrs["paddings"], attrs["padding_algorithm"], x.shape[2:], k, s, attrs["dilations"]
    )
    full = [
        (x.shape[2] - 1) * s[0] - pads[0] - pads[1] + d[0] * (k[0] - 1) + 1,
        (x.shape[3] - 1) * s[1] - pads[2] - pads[3] + d[1] * (k[1] - 1) + 1,
    ]
    if attrs["output_size"]:
        full = list(attrs["output_size"])
    padded = (full[0] + pads[0] + pads[1], full[1] + pads[2] + pads[3])
    return pads, d, tuple(full), padded


@kernel("depthwise_conv2d_transpose", FLOATS)
@kernel("conv2d_transpose", FLOATS)
def conv2d_transpose(inputs, attrs):
    x, w = _to_nchw(inputs["Input"], attrs), inputs["Filter"]
    g = attrs["groups"]
    n, ci, h, wd = x.shape
    pads, d, full, padded = _transpose_geometry(x, w, attrs)
    w_g = w.reshape(g, ci // g, -1)
    cols = xp.matmul(
        w_g.transpose(0, 2, 1), x.reshape(n, g, ci // g, h * wd)
    )  # (N, G, Og*KH*KW, H*W)
    cols = cols.reshape((n, w.shape[1] * g) + w.shape[2:] + (h, wd))
    y = col2im_batched(xp, cols, padded, attrs["strides"], d)
    return {
        "Output": _from_nchw(
            y[:, :, pads[0] : pads[0] + full[0], pads[2] : pads[2] + full[1]], attrs
        )
    }


@kernel("depthwise_conv2d_transpose_grad", FLOATS, wants_outputs=True)
@kernel("conv2d_transpose_grad", FLOATS, wants_outputs=True)
def conv2d_transpose_grad(inputs, attrs, wanted):
    x, w = _to_nchw(inputs["Input"], attrs), inputs["Filter"]
    dy = _to_nchw(inputs["Output@GRAD"], attrs)
    g, s = attrs["groups"], attrs["strides"]
    n, ci, h, wd = x.shape
    pads, d, full, padded = _transpose_geometry(x, w, attrs)
    dy_pads = (pads[0], padded[0] - full[0] - pads[0], pads[2], padded[1] - full[1] - pads[2])
    res = {}
    if "Input@GRAD" in wanted:
        # the input gradient of a transposed convolution is a plain convolution of dy
        dx = conv_nchw(dy, w.reshape(g, ci // g, -1), w.shape[2:], s, d, dy_pads, (h, wd))
        res["Input@GRAD"] = _from_nchw(dx, attrs)
    if "Filter@GRAD" in wanted:
        dcols = im2col(xp, pad_nchw(xp, dy, dy_pads), w.shape[2:], s, d, (h, wd)).reshape(
            g, -1, n * h * wd
        )
        x_g = xp.ascontiguousarray(x.transpose(1, 0, 2, 3)).reshape(g, ci // g, n * h * wd)
        res["Filter@GRAD"] = xp.matmul(x_g, dcols.transpose(0, 2, 1)).reshape(w.shape)
    return res
