"""numpy kernels of sequence_expand and sequence_expand_as.

Numpy-only (``generic=False``): LoD offsets are host data and the kernels loop over
sequences on the host; a device plugin overrides them.
"""

from __future__ import annotations

import numpy as np
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import NUMERIC, kernel
from oar_kernels_cpu.kernels._sequence import array_of, lod_of, segment_sum, with_lod


def _plan(inputs, attrs, op: str) -> tuple:
    """(x, x offsets or None, repeat count per x sequence)."""
    x_in, y_in = inputs["X"], inputs["Y"]
    x = array_of(x_in)
    y_lod = lod_of(y_in, op, "Y")
    level = attrs["ref_level"]
    if not -len(y_lod) <= level < len(y_lod):
        raise ShapeError(f"{op}: ref_level {level} is out of range for Y's {len(y_lod)} LoD levels")
    repeats = np.diff(np.asarray(y_lod[level], dtype=np.int64))
    x_lod = x_in._lod if hasattr(x_in, "_lod") and x_in._lod else None
    if x_lod is not None and len(x_lod) > 1:
        raise ShapeError(f"{op}: X may have at most one LoD level, given {len(x_lod)}")
    x_off = np.asarray(x_lod[0], dtype=np.int64) if x_lod else None
    n_x = len(x_off) - 1 if x_off is not None else x.shape[0]
    if n_x != len(repeats):
        what = "sequences" if x_off is not None else "rows"
        raise ShapeError(
            f"{op}: X has {n_x} {what} but Y's LoD level {level} has {len(repeats)} sequences"
        )
    return x, x_off, repeats


def _rows(x_off: np.ndarray | None, n: int, repeats: np.ndarray) -> tuple:
    """Source row of every output row, and the output's sequence lengths."""
    if x_off is None:
        return np.repeat(np.arange(n), repeats), None
    lengths = np.diff(x_off)
    rows, out_lens = [], []
    for i, r in enumerate(repeats):
        seq = np.arange(x_off[i], x_off[i + 1])
        rows.extend([seq] * int(r))
        out_lens.extend([int(lengths[i])] * int(r))
    flat = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    return flat, out_lens


@kernel("sequence_expand", NUMERIC, lod=True, generic=False)
def sequence_expand(inputs, attrs):
    x, x_off, repeats = _plan(inputs, attrs, "sequence_expand")
    rows, out_lens = _rows(x_off, x.shape[0], repeats)
    out = x[rows]
    if out_lens is None:
        return {"Out": out}
    return {"Out": with_lod(out, [np.concatenate([[0], np.cumsum(out_lens)]).tolist()])}


@kernel("sequence_expand_grad", NUMERIC, lod=True, generic=False)
def sequence_expand_grad(inputs, attrs):
    x, x_off, repeats = _plan(inputs, attrs, "sequence_expand_grad")
    rows, _ = _rows(x_off, x.shape[0], repeats)
    dout = array_of(inputs["Out@GRAD"])
    dx = np.zeros_like(x)
    np.add.at(dx, rows, dout)
    x_in = inputs["X"]
    return {"X@GRAD": with_lod(dx, x_in._lod if hasattr(x_in, "_lod") and x_in._lod else [])}


def _expand_as_plan(inputs, op: str) -> tuple:
    x = array_of(inputs["X"])
    y_off = np.asarray(lod_of(inputs["Y"], op, "Y")[0], dtype=np.int64)
    if len(y_off) - 1 != x.shape[0]:
        raise ShapeError(
            f"{op}: X has {x.shape[0]} rows but Y's LoD has {len(y_off) - 1} sequences"
        )
    return x, y_off


@kernel("sequence_expand_as", NUMERIC, lod=True, generic=False)
def sequence_expand_as(inputs, attrs):
    x, y_off = _expand_as_plan(inputs, "sequence_expand_as")
    out = np.repeat(x, np.diff(y_off), axis=0)
    return {"Out": with_lod(out, [y_off.tolist()])}


@kernel("sequence_expand_as_grad", NUMERIC, lod=True, generic=False)
def sequence_expand_as_grad(inputs, attrs):
    x, y_off = _expand_as_plan(inputs, "sequence_expand_as_grad")
    dout = array_of(inputs["Out@GRAD"])
    return {"X@GRAD": segment_sum(dout, y_off).astype(x.dtype, copy=False)}
