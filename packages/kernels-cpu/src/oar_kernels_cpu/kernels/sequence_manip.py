"""numpy kernels of the sequence rearrangements (last LoD level).

Numpy-only (``generic=False``): LoD offsets are host data and the kernels loop over
sequences on the host; a device plugin overrides them.
"""

from __future__ import annotations

import numpy as np
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import NUMERIC, kernel
from oar_kernels_cpu.kernels._sequence import array_of, last_level, lod_of, with_lod


def _offsets(lengths) -> list:
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64).tolist()


# --- sequence_reshape ---


def _reshape_lod(op: str, lod: list, width: int, new_dim: int) -> list:
    off = np.asarray(lod[-1], dtype=np.int64)
    sizes = np.diff(off) * width
    if (sizes % new_dim).any():
        bad = int(np.flatnonzero(sizes % new_dim)[0])
        raise ShapeError(
            f"{op}: sequence {bad} holds {int(sizes[bad])} values, not a multiple of "
            f"new_dim {new_dim}"
        )
    return lod[:-1] + [_offsets(sizes // new_dim)]


@kernel("sequence_reshape", NUMERIC, lod=True, generic=False)
def sequence_reshape(inputs, attrs):
    x, _, lod = last_level(inputs["X"], "sequence_reshape", "X")
    new_dim = attrs["new_dim"]
    new_lod = _reshape_lod("sequence_reshape", lod, x.shape[1], new_dim)
    return {"Out": with_lod(x.reshape(-1, new_dim), new_lod)}


@kernel("sequence_reshape_grad", NUMERIC, lod=True, generic=False)
def sequence_reshape_grad(inputs, attrs):
    x, _, lod = last_level(inputs["X"], "sequence_reshape_grad", "X")
    return {"X@GRAD": with_lod(array_of(inputs["Out@GRAD"]).reshape(x.shape), lod)}


# --- sequence_reverse ---


def _reversed_rows(off: np.ndarray) -> np.ndarray:
    """Row permutation that reverses each segment (its own inverse)."""
    rows = np.arange(int(off[-1]))
    starts = np.repeat(off[:-1], np.diff(off))
    ends = np.repeat(off[1:], np.diff(off))
    return starts + ends - 1 - rows


@kernel("sequence_reverse", NUMERIC, lod=True, generic=False)
def sequence_reverse(inputs, attrs):
    x, off, lod = last_level(inputs["X"], "sequence_reverse", "X")
    return {"Y": with_lod(x[_reversed_rows(off)], lod)}


@kernel("sequence_reverse_grad", NUMERIC, lod=True, generic=False)
def sequence_reverse_grad(inputs, attrs):
    _, off, lod = last_level(inputs["X"], "sequence_reverse_grad", "X")
    return {"X@GRAD": with_lod(array_of(inputs["Y@GRAD"])[_reversed_rows(off)], lod)}


# --- sequence_concat ---


def _concat_rows(op: str, xs: list) -> tuple:
    """Source (input, row) of every output row, and the output's lengths."""
    offs = [last_level(x, op, f"X[{i}]")[1] for i, x in enumerate(xs)]
    n = len(offs[0]) - 1
    for i, off in enumerate(offs):
        if len(off) - 1 != n:
            raise ShapeError(
                f"{op}: X[{i}] has {len(off) - 1} sequences but X[0] has {n}; "
                "every input must hold the same number of sequences"
            )
    order = [(k, a, b) for s in range(n) for k, off in enumerate(offs) for a, b in [off[s : s + 2]]]
    lengths = [sum(int(off[s + 1] - off[s]) for off in offs) for s in range(n)]
    return order, lengths


@kernel("sequence_concat", NUMERIC, lod=True, generic=False)
def sequence_concat(inputs, attrs):
    xs = inputs["X"]
    order, lengths = _concat_rows("sequence_concat", xs)
    arrays = [array_of(x) for x in xs]
    parts = [arrays[k][a:b] for k, a, b in order]
    out = np.concatenate(parts) if parts else arrays[0][:0]
    return {"Out": with_lod(out, [_offsets(lengths)])}


@kernel("sequence_concat_grad", NUMERIC, lod=True, generic=False)
def sequence_concat_grad(inputs, attrs):
    xs = inputs["X"]
    order, _ = _concat_rows("sequence_concat_grad", xs)
    dout = array_of(inputs["Out@GRAD"])
    grads = [np.zeros_like(array_of(x)) for x in xs]
    pos = 0
    for k, a, b in order:
        grads[k][a:b] = dout[pos : pos + b - a]
        pos += b - a
    return {
        "X@GRAD": [with_lod(g, lod_of(x, "sequence_concat_grad", "X")) for g, x in zip(grads, xs)]
    }


# --- sequence_slice ---


def _slice_rows(op: str, inputs) -> tuple:
    x, off, lod = last_level(inputs["X"], op, "X")
    start = array_of(inputs["Offset"]).reshape(-1).astype(np.int64)
    length = array_of(inputs["Length"]).reshape(-1).astype(np.int64)
    n = len(off) - 1
    if len(start) != n or len(length) != n:
        raise ShapeError(
            f"{op}: Offset and Length need one entry per sequence ({n}), "
            f"given {len(start)} and {len(length)}"
        )
    seq_len = np.diff(off)
    bad = (start < 0) | (length < 0) | (start + length > seq_len)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ShapeError(
            f"{op}: sequence {i} has {int(seq_len[i])} rows; Offset {int(start[i])} + "
            f"Length {int(length[i])} is out of range"
        )
    rows = np.concatenate(
        [np.arange(off[i] + start[i], off[i] + start[i] + length[i]) for i in range(n)]
    )
    return x, rows.astype(np.int64), length, lod


@kernel("sequence_slice", NUMERIC, lod=True, generic=False)
def sequence_slice(inputs, attrs):
    x, rows, length, lod = _slice_rows("sequence_slice", inputs)
    return {"Out": with_lod(x[rows], lod[:-1] + [_offsets(length)])}


@kernel("sequence_slice_grad", NUMERIC, lod=True, generic=False)
def sequence_slice_grad(inputs, attrs):
    x, rows, _, lod = _slice_rows("sequence_slice_grad", inputs)
    dx = np.zeros_like(x)
    dx[rows] = array_of(inputs["Out@GRAD"])
    return {"X@GRAD": with_lod(dx, lod)}


# --- sequence_enumerate ---


@kernel("sequence_enumerate", ("int32", "int64"), lod=True, generic=False)
def sequence_enumerate(inputs, attrs):
    x, off, lod = last_level(inputs["X"], "sequence_enumerate", "X")
    flat = x.reshape(-1)
    win, pad = attrs["win_size"], attrs["pad_value"]
    ends = np.repeat(off[1:], np.diff(off))
    idx = np.arange(len(flat))[:, None] + np.arange(win)[None, :]
    inside = idx < ends[:, None]
    out = (
        np.where(inside, flat[np.minimum(idx, max(len(flat) - 1, 0))], pad)
        if len(flat)
        else np.zeros((0, win), x.dtype)
    )
    return {"Out": with_lod(out.astype(x.dtype, copy=False), lod)}


# --- sequence_scatter ---


def _scatter_targets(op: str, inputs) -> tuple:
    x = array_of(inputs["X"])
    ids, off, _ = last_level(inputs["Ids"], op, "Ids")
    ids = ids.reshape(-1).astype(np.int64)
    n = len(off) - 1
    if n != x.shape[0]:
        raise ShapeError(f"{op}: Ids has {n} sequences but X has {x.shape[0]} rows")
    if ids.size and (ids.min() < 0 or ids.max() >= x.shape[1]):
        raise ShapeError(f"{op}: Ids must lie in [0, {x.shape[1]}), given {ids.tolist()}")
    rows = np.repeat(np.arange(n), np.diff(off))
    return x, rows, ids


@kernel("sequence_scatter", NUMERIC, lod=True, generic=False)
def sequence_scatter(inputs, attrs):
    x, rows, ids = _scatter_targets("sequence_scatter", inputs)
    upd = array_of(inputs["Updates"]).reshape(len(ids), *x.shape[2:])
    out = x.copy()
    np.add.at(out, (rows, ids), upd)
    return {"Out": out}


@kernel("sequence_scatter_grad", NUMERIC, lod=True, generic=False)
def sequence_scatter_grad(inputs, attrs):
    dout = array_of(inputs["Out@GRAD"])
    ids, off, lod = last_level(inputs["Ids"], "sequence_scatter_grad", "Ids")
    ids = ids.reshape(-1).astype(np.int64)
    rows = np.repeat(np.arange(len(off) - 1), np.diff(off))
    upd = inputs["Updates"]
    d_upd = dout[rows, ids].reshape(array_of(upd).shape)
    upd_lod = upd._lod if hasattr(upd, "_lod") and upd._lod else lod
    return {"X@GRAD": dout.copy(), "Updates@GRAD": with_lod(d_upd, upd_lod)}
