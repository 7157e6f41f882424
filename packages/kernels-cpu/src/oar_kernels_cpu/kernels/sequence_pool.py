"""numpy kernels of sequence_pool and sequence_softmax (last LoD level).

Numpy-only (``generic=False``): LoD offsets are host data and the kernels loop over
sequences on the host; a device plugin overrides them.
"""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel
from oar_kernels_cpu.kernels._sequence import (
    array_of,
    last_level,
    lod_of,
    segment_ids,
    segment_sum,
    with_lod,
)


def _max_pool(x: np.ndarray, off: np.ndarray, pad: float) -> tuple:
    """Per-segment max and its (first) row inside the segment.

    A loop over segments: per-segment ``max``/``argmax`` on contiguous rows beat
    ``np.maximum.reduceat`` along axis 0 several times over (measured in
    benchmarks/bench_sequence.py).
    """
    n = len(off) - 1
    out = np.full((n,) + x.shape[1:], pad, dtype=x.dtype)
    index = np.zeros((n,) + x.shape[1:], dtype=np.int32)
    for i, (a, b) in enumerate(zip(off[:-1].tolist(), off[1:].tolist())):
        if b > a:
            seg = x[a:b]
            index[i] = seg.argmax(axis=0)
            out[i] = seg.max(axis=0)
    return out, index


@kernel("sequence_pool", FLOATS, lod=True, generic=False)
def sequence_pool(inputs, attrs):
    x, off, lod = last_level(inputs["X"], "sequence_pool", "X")
    kind, pad = attrs["pooltype"], attrs["pad_value"]
    lengths = np.diff(off)
    empty = lengths == 0
    index = None
    if kind == "MAX":
        out, index = _max_pool(x, off, pad)
    elif kind in ("SUM", "AVERAGE", "SQRT"):
        out = segment_sum(x, off)
        if kind != "SUM":
            div = np.maximum(lengths, 1).astype(x.dtype)
            div = np.sqrt(div) if kind == "SQRT" else div
            out /= div.reshape((-1,) + (1,) * (x.ndim - 1))
    else:
        rows = off[:-1] if kind == "FIRST" else off[1:] - 1
        out = (
            x[np.where(empty, 0, rows)] if len(x) else np.zeros((len(rows),) + x.shape[1:], x.dtype)
        )
    if empty.any():
        out[empty] = pad
    if index is None:
        index = np.zeros(out.shape, dtype=np.int32)
    return {"Out": with_lod(out, lod[:-1]), "MaxIndex": index}


@kernel("sequence_pool_grad", FLOATS, lod=True, generic=False)
def sequence_pool_grad(inputs, attrs):
    x, off, lod = last_level(inputs["X"], "sequence_pool_grad", "X")
    dout = array_of(inputs["Out@GRAD"])
    kind = attrs["pooltype"]
    lengths = np.diff(off)
    tail = (1,) * (x.ndim - 1)
    if kind in ("SUM", "AVERAGE", "SQRT"):
        scale = np.maximum(lengths, 1).astype(x.dtype)
        if kind == "SUM":
            scale[:] = 1
        elif kind == "SQRT":
            scale = np.sqrt(scale)
        dx = np.repeat(dout / scale.reshape((-1,) + tail), lengths, axis=0)
    else:
        dx = np.zeros_like(x)
        nonempty = np.flatnonzero(lengths)
        if kind == "MAX":
            index = array_of(inputs["MaxIndex"]).astype(np.int64)
            rows = index[nonempty] + off[nonempty].reshape((-1,) + tail)
            np.put_along_axis(dx, rows, dout[nonempty], axis=0)
        else:
            rows = off[nonempty] if kind == "FIRST" else off[nonempty + 1] - 1
            dx[rows] = dout[nonempty]
    return {"X@GRAD": with_lod(dx.astype(x.dtype, copy=False), lod)}


def _flat(x: np.ndarray) -> np.ndarray:
    return x.reshape(-1)


@kernel("sequence_softmax", FLOATS, lod=True, generic=False)
def sequence_softmax(inputs, attrs):
    x, off, lod = last_level(inputs["X"], "sequence_softmax", "X")
    v = _flat(x)
    seg = segment_ids(off)
    top = np.full(len(off) - 1, -np.inf, dtype=v.dtype)
    np.maximum.at(top, seg, v)
    e = np.exp(v - top[seg])
    out = e / segment_sum(e, off)[seg]
    return {"Out": with_lod(out.reshape(x.shape), lod)}


@kernel("sequence_softmax_grad", FLOATS, lod=True, generic=False)
def sequence_softmax_grad(inputs, attrs):
    lod = lod_of(inputs["X"], "sequence_softmax_grad", "X")
    off = np.asarray(lod[-1], dtype=np.int64)
    y = array_of(inputs["Out"])
    dy = array_of(inputs["Out@GRAD"])
    yv, dyv = _flat(y), _flat(dy)
    seg = segment_ids(off)
    dot = segment_sum(yv * dyv, off)[seg]
    return {"X@GRAD": with_lod(((dyv - dot) * yv).reshape(y.shape), lod)}
