"""numpy kernels of the contrib text-matching ops: match_matrix_tensor, var_conv_2d and
sequence_topk_avg_pooling (layouts in ``oar.ops.text_matching``).

Numpy-only (``generic=False``): the instance sizes are LoD offsets (host data) and the
kernels loop over instances on the host.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import FLOATS, _gemm, kernel
from oar_kernels_cpu.kernels._sequence import array_of, last_level, with_lod


def _offsets(lengths) -> list:
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64).tolist()


def _pairs(inputs, op: str) -> tuple:
    x, xoff, xlod = last_level(inputs["X"], op, "X")
    y, yoff, _ = last_level(inputs["Y"], op, "Y")
    if len(xoff) != len(yoff):
        raise ShapeError(
            f"{op}: X and Y must hold as many sequences, given {len(xoff) - 1} and {len(yoff) - 1}"
        )
    return x, xoff.tolist(), y, yoff.tolist(), xlod


@kernel("match_matrix_tensor", FLOATS, lod=True, generic=False)
def match_matrix_tensor(inputs, attrs):
    x, xoff, y, yoff, _ = _pairs(inputs, "match_matrix_tensor")
    w = array_of(inputs["W"])
    h, t = w.shape[0], w.shape[1]
    tmp = _gemm.matmul(np, x, w.reshape(h, t * h))
    outs = []
    for xa, xb, ya, yb in zip(xoff[:-1], xoff[1:], yoff[:-1], yoff[1:]):
        xs = tmp[xa:xb].reshape(xb - xa, t, h)
        outs.append(np.einsum("ith,jh->tij", xs, y[ya:yb]).ravel())
    out = np.concatenate(outs).reshape(-1, 1).astype(x.dtype, copy=False)
    lod = [_offsets([o.size for o in outs])]
    return {"Out": with_lod(out, lod), "Tmp": tmp.reshape(-1, 1)}


@kernel("match_matrix_tensor_grad", FLOATS, lod=True, generic=False)
def match_matrix_tensor_grad(inputs, attrs):
    x, xoff, y, yoff, xlod = _pairs(inputs, "match_matrix_tensor_grad")
    w = array_of(inputs["W"])
    h, t = w.shape[0], w.shape[1]
    w2 = w.reshape(h, t * h)
    tmp = _gemm.matmul(np, x, w2)
    dout = array_of(inputs["Out@GRAD"]).ravel()
    dtmp, dy = np.zeros_like(tmp), np.zeros_like(y)
    at = 0
    for xa, xb, ya, yb in zip(xoff[:-1], xoff[1:], yoff[:-1], yoff[1:]):
        lx, ly = xb - xa, yb - ya
        d = dout[at : at + t * lx * ly].reshape(t, lx, ly)
        at += t * lx * ly
        xs = tmp[xa:xb].reshape(lx, t, h)
        dtmp[xa:xb] = np.einsum("tij,jh->ith", d, y[ya:yb]).reshape(lx, t * h)
        dy[ya:yb] = np.einsum("tij,ith->jh", d, xs)
    ylod = inputs["Y"]._lod
    dx, dw = _gemm.matmuls(np, [(dtmp, w2.T), (x.T, dtmp)])
    return {
        "X@GRAD": with_lod(dx, xlod),
        "Y@GRAD": with_lod(dy, [list(level) for level in ylod]),
        "W@GRAD": dw.reshape(w.shape),
    }


def _sizes(inputs, op: str) -> tuple:
    """(images flattened, the LoD of X, rows per instance, cols per instance)."""
    x, xoff, xlod = last_level(inputs["X"], op, "X")
    rows = np.diff(last_level(inputs["ROW"], op, "ROW")[1]).tolist()
    cols = np.diff(last_level(inputs["COLUMN"], op, "COLUMN")[1]).tolist()
    if len(rows) != len(cols) or len(rows) != len(xoff) - 1:
        raise ShapeError(
            f"{op}: X, ROW and COLUMN must hold as many instances, given {len(xoff) - 1}, "
            f"{len(rows)} and {len(cols)}"
        )
    return x.reshape(-1), xlod, rows, cols


def _image_offsets(op: str, x, rows, cols, channels: int) -> list:
    off = _offsets([channels * r * c for r, c in zip(rows, cols)])
    if off[-1] != x.size:
        raise ShapeError(
            f"{op}: X must hold {channels} x rows x cols values per instance ({off[-1]} in "
            f"all for rows {rows} and cols {cols}), given {x.size}"
        )
    return off


def _geometry(attrs) -> tuple:
    return (
        attrs["InputChannel"],
        attrs["KernelH"],
        attrs["KernelW"],
        attrs["StrideH"],
        attrs["StrideW"],
    )


def _im2col(img, kh: int, kw: int, sh: int, sw: int) -> np.ndarray:
    """[cin * kh * kw, out_rows * out_cols] windows of ``img`` [cin, r, c], zero padded."""
    cin, r, c = img.shape
    orr, oc = (r - 1) // sh + 1, (c - 1) // sw + 1
    pad = np.zeros((cin, r + kh, c + kw), img.dtype)
    pad[:, kh // 2 : kh // 2 + r, kw // 2 : kw // 2 + c] = img
    win = sliding_window_view(pad, (kh, kw), axis=(1, 2))[:, ::sh, ::sw][:, :orr, :oc]
    return win.transpose(0, 3, 4, 1, 2).reshape(cin * kh * kw, orr * oc)


@kernel("var_conv_2d", FLOATS, lod=True, generic=False)
def var_conv_2d(inputs, attrs):
    x, _, rows, cols = _sizes(inputs, "var_conv_2d")
    cin, kh, kw, sh, sw = _geometry(attrs)
    w = array_of(inputs["W"])
    off = _image_offsets("var_conv_2d", x, rows, cols, cin)
    outs, col_parts = [], []
    for a, r, c in zip(off[:-1], rows, cols):
        if r == 0 or c == 0:
            outs.append(np.zeros(0, x.dtype))
            col_parts.append(np.zeros(0, x.dtype))
            continue
        col = _im2col(x[a : a + cin * r * c].reshape(cin, r, c), kh, kw, sh, sw)
        col_parts.append(col.ravel())
        outs.append(_gemm.matmul(np, w, col).ravel())
    out = np.concatenate(outs).reshape(-1, 1)
    col = np.concatenate(col_parts).reshape(-1, 1)
    return {
        "Out": with_lod(out, [_offsets([o.size for o in outs])]),
        "Col": with_lod(col, [_offsets([o.size for o in col_parts])]),
    }


@kernel("var_conv_2d_grad", FLOATS, lod=True, generic=False)
def var_conv_2d_grad(inputs, attrs):
    x, xlod, rows, cols = _sizes(inputs, "var_conv_2d_grad")
    cin, kh, kw, sh, sw = _geometry(attrs)
    w = array_of(inputs["W"])
    dout = array_of(inputs["Out@GRAD"]).ravel()
    off = _image_offsets("var_conv_2d_grad", x, rows, cols, cin)
    dx, dw = np.zeros_like(x), np.zeros_like(w)
    at = 0
    for a, r, c in zip(off[:-1], rows, cols):
        if r == 0 or c == 0:
            continue
        orr, oc = (r - 1) // sh + 1, (c - 1) // sw + 1
        d = dout[at : at + w.shape[0] * orr * oc].reshape(w.shape[0], orr * oc)
        at += d.size
        col = _im2col(x[a : a + cin * r * c].reshape(cin, r, c), kh, kw, sh, sw)
        dw_part, dcol = _gemm.matmuls(np, [(d, col.T), (w.T, d)])
        dw += dw_part
        dcol = dcol.reshape(cin, kh, kw, orr, oc)
        dpad = np.zeros((cin, r + kh, c + kw), x.dtype)
        for i in range(kh):
            for j in range(kw):
                dpad[:, i : i + (orr - 1) * sh + 1 : sh, j : j + (oc - 1) * sw + 1 : sw] += dcol[
                    :, i, j
                ]
        dx[a : a + cin * r * c] = dpad[:, kh // 2 : kh // 2 + r, kw // 2 : kw // 2 + c].ravel()
    return {"X@GRAD": with_lod(dx.reshape(-1, 1), xlod), "W@GRAD": dw}


def _topk(m, maxk: int) -> tuple:
    """(indices [C, r, min(maxk, c)] of the largest values, first-come on ties; values)."""
    idx = np.argsort(-m, axis=2, kind="stable")[:, :, :maxk]
    return idx, np.take_along_axis(m, idx, axis=2)


@kernel("sequence_topk_avg_pooling", FLOATS, lod=True, generic=False)
def sequence_topk_avg_pooling(inputs, attrs):
    op = "sequence_topk_avg_pooling"
    x, _, rows, cols = _sizes(inputs, op)
    ch, topks = attrs["channel_num"], [int(k) for k in attrs["topks"]]
    maxk = max(topks)
    off = _image_offsets(op, x, rows, cols, ch)
    out = np.zeros((sum(rows), ch, len(topks)), x.dtype)
    pos = []
    at = 0
    for a, r, c in zip(off[:-1], rows, cols):
        idx, vals = _topk(x[a : a + ch * r * c].reshape(ch, r, c), maxk)
        csum = np.cumsum(vals, axis=2)
        for i, k in enumerate(topks):
            if c:
                out[at : at + r, :, i] = (csum[:, :, min(k, c) - 1] / k).T
        full = np.full((ch, r, maxk), -1, np.int32)
        full[:, :, : idx.shape[2]] = idx
        pos.append(full.transpose(1, 0, 2).ravel())
        at += r
    row_lod = [list(level) for level in inputs["ROW"]._lod]
    return {
        "Out": with_lod(out.reshape(sum(rows), ch * len(topks)), row_lod),
        "pos": np.concatenate(pos) if pos else np.zeros(0, np.int32),
    }


@kernel("sequence_topk_avg_pooling_grad", FLOATS, lod=True, generic=False)
def sequence_topk_avg_pooling_grad(inputs, attrs):
    op = "sequence_topk_avg_pooling_grad"
    x, xlod, rows, cols = _sizes(inputs, op)
    ch, topks = attrs["channel_num"], [int(k) for k in attrs["topks"]]
    off = _image_offsets(op, x, rows, cols, ch)
    dout = array_of(inputs["Out@GRAD"]).reshape(-1, ch, len(topks))
    dx = np.zeros_like(x)
    at = 0
    for a, r, c in zip(off[:-1], rows, cols):
        idx, _ = _topk(x[a : a + ch * r * c].reshape(ch, r, c), max(topks))
        g = np.zeros((ch, r, c), x.dtype)
        for i, k in enumerate(topks):
            share = (dout[at : at + r, :, i].T / k)[:, :, None]
            sel = idx[:, :, : min(k, c)]
            np.add.at(g, (np.arange(ch)[:, None, None], np.arange(r)[None, :, None], sel), share)
        dx[a : a + ch * r * c] = g.ravel()
        at += r
    return {"X@GRAD": with_lod(dx.reshape(-1, 1), xlod)}
