"""numpy kernels of sequence_pad, sequence_unpad and sequence_mask.

Numpy-only (``generic=False``): LoD offsets are host data and the kernels loop over
sequences on the host; a device plugin overrides them.
"""

from __future__ import annotations

import numpy as np
from oar.api import convert_dtype
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import NUMERIC, kernel
from oar_kernels_cpu.kernels._sequence import array_of, last_level, with_lod


def _padded_length(op: str, lengths: np.ndarray, attr: int) -> int:
    longest = int(lengths.max()) if len(lengths) else 0
    if attr < 0:
        return longest
    if attr < longest:
        raise ShapeError(
            f"{op}: padded_length (maxlen) {attr} is shorter than the longest sequence ({longest})"
        )
    return attr


def _positions(off: np.ndarray, lengths: np.ndarray) -> tuple:
    """(sequence index, step index) of every row of the LoD tensor."""
    seq = np.repeat(np.arange(len(lengths)), lengths)
    step = np.arange(int(off[-1])) - np.repeat(off[:-1], lengths)
    return seq, step


@kernel("sequence_pad", NUMERIC, lod=True, generic=False)
def sequence_pad(inputs, attrs):
    x, off, _ = last_level(inputs["X"], "sequence_pad", "X")
    pad = array_of(inputs["PadValue"])
    lengths = np.diff(off)
    width = _padded_length("sequence_pad", lengths, attrs["padded_length"])
    step_shape = x.shape[1:]
    if pad.size != 1 and pad.shape != step_shape:
        raise ShapeError(
            f"sequence_pad: PadValue must have 1 element or X's step shape {list(step_shape)}, "
            f"given shape {list(pad.shape)}"
        )
    out = np.empty((len(lengths), width) + step_shape, dtype=x.dtype)
    out[...] = pad.reshape(()) if pad.size == 1 else pad
    seq, step = _positions(off, lengths)
    out[seq, step] = x
    return {"Out": out, "Length": lengths.astype(np.int64)}


@kernel("sequence_pad_grad", NUMERIC, lod=True, generic=False)
def sequence_pad_grad(inputs, attrs):
    x, off, lod = last_level(inputs["X"], "sequence_pad_grad", "X")
    dout = array_of(inputs["Out@GRAD"])
    seq, step = _positions(off, np.diff(off))
    return {"X@GRAD": with_lod(dout[seq, step].astype(x.dtype, copy=False), lod)}


def _unpad_plan(inputs, op: str) -> tuple:
    x = array_of(inputs["X"])
    lengths = array_of(inputs["Length"]).reshape(-1).astype(np.int64)
    if len(lengths) != x.shape[0] or (lengths < 0).any() or (lengths > x.shape[1]).any():
        raise ShapeError(
            f"{op}: Length must hold one length in [0, {x.shape[1]}] per row of X "
            f"({x.shape[0]} rows), given {lengths.tolist()}"
        )
    off = np.concatenate([[0], np.cumsum(lengths)])
    return x, lengths, off


@kernel("sequence_unpad", NUMERIC, lod=True, generic=False)
def sequence_unpad(inputs, attrs):
    x, lengths, off = _unpad_plan(inputs, "sequence_unpad")
    seq, step = _positions(off, lengths)
    return {"Out": with_lod(x[seq, step], [off.tolist()])}


@kernel("sequence_unpad_grad", NUMERIC, lod=True, generic=False)
def sequence_unpad_grad(inputs, attrs):
    x, lengths, off = _unpad_plan(inputs, "sequence_unpad_grad")
    seq, step = _positions(off, lengths)
    dx = np.zeros_like(x)
    dx[seq, step] = array_of(inputs["Out@GRAD"])
    return {"X@GRAD": dx}


@kernel("sequence_mask", ("int32", "int64"), generic=False)
def sequence_mask(inputs, attrs):
    x = inputs["X"]
    maxlen = attrs["maxlen"]
    if inputs.get("MaxLenTensor") is not None:
        maxlen = int(np.asarray(inputs["MaxLenTensor"]).reshape(-1)[0])
    if maxlen < 0:
        maxlen = int(x.max()) if x.size else 0
    mask = np.arange(maxlen) < x[..., None]
    return {"Y": mask.astype(convert_dtype(attrs["out_dtype"]))}
