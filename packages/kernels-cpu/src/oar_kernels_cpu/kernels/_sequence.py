"""Helpers shared by the sequence kernels: LoD offsets and per-sequence segment math."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from oar.api import LoDTensor
from oar.errors import ShapeError


def lod_of(t, op: str, slot: str) -> list:
    """The LoD (offsets per level) of input ``slot``; a clear error when it has none."""
    if isinstance(t, LoDTensor) and t._lod:
        return [list(level) for level in t._lod]
    given = f"shape {list(np.shape(t._array if isinstance(t, LoDTensor) else t))}"
    raise ShapeError(
        f"{op}: input {slot} must be a LoDTensor with LoD (a sequence batch), "
        f"given a tensor without LoD ({given})"
    )


def array_of(t) -> np.ndarray:
    return t._array if isinstance(t, LoDTensor) else t


def check_rows(op: str, slot: str, offsets, rows: int) -> None:
    if offsets[0] != 0 or offsets[-1] != rows:
        raise ShapeError(
            f"{op}: the LoD of input {slot} ends at row {int(offsets[-1])} but the tensor has "
            f"{rows} rows (LoD offsets {[int(o) for o in offsets]})"
        )


def last_level(t, op: str, slot: str) -> tuple:
    """(array, offsets of the last level as int64, the whole LoD)."""
    lod = lod_of(t, op, slot)
    x = array_of(t)
    off = np.asarray(lod[-1], dtype=np.int64)
    check_rows(op, slot, off, x.shape[0])
    return x, off, lod


def with_lod(array: np.ndarray, lod: list):
    """``array`` with ``lod`` attached, or the bare array when ``lod`` is empty."""
    return LoDTensor(array, lod) if lod else array


def segment_sum(x: np.ndarray, off: np.ndarray) -> np.ndarray:
    """Row sums of each segment ``x[off[i]:off[i+1]]``; empty segments give zeros.

    Long segments are summed one by one (contiguous row blocks: far faster than
    ``np.add.reduceat`` along axis 0); many short ones with one ``reduceat``.
    """
    n = len(off) - 1
    out = np.zeros((n,) + x.shape[1:], dtype=x.dtype)
    if n == 0:
        return out
    if x.ndim > 1 and len(x) >= 8 * n:
        for i, (a, b) in enumerate(zip(off[:-1].tolist(), off[1:].tolist())):
            if b > a:
                out[i] = x[a:b].sum(axis=0)
        return out
    starts = off[:-1]
    nonempty = off[1:] > starts
    if nonempty.any():
        out[nonempty] = np.add.reduceat(x, starts[nonempty], axis=0)
    return out


def segment_ids(off: np.ndarray) -> np.ndarray:
    """For each row, the index of the segment it belongs to."""
    return np.repeat(np.arange(len(off) - 1), np.diff(off))


def time_steps(off: np.ndarray, reverse: bool = False) -> list:
    """Per time step t: (indices of the sequences still running, their row at step t).

    Step t of a reversed sequence is its row ``len - 1 - t``: the recurrence runs from the
    last row to the first.
    """
    lengths = np.diff(off)
    steps = []
    for t in range(int(lengths.max()) if len(lengths) else 0):
        active = np.flatnonzero(lengths > t)
        offset = lengths[active] - 1 - t if reverse else t
        steps.append((active, off[active] + offset))
    return steps


def step_products_at_one_blas_thread(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """A recurrent kernel, its time-step loop run at one BLAS thread when a step's product
    (every sequence's row by the ``Weight``) is small: each step's few-microsecond products on
    OpenBLAS's threads left its workers spinning and, on a busy machine, made dynamic_lstm
    ten times slower (57 against 608 ms)."""
    from oar_kernels_cpu.kernels import _gemm

    @functools.wraps(kernel)
    def run(inputs, attrs, *rest):
        t = inputs["Input"]
        lod = t._lod if isinstance(t, LoDTensor) else None
        if not lod:  # the kernel raises its clear error
            return kernel(inputs, attrs, *rest)
        macs = (len(lod[-1]) - 1) * int(np.size(array_of(inputs["Weight"])))
        return _gemm.one_blas_thread_below(macs, kernel, inputs, attrs, *rest)

    return run
