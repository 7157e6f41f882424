"""numpy kernels of sequence_conv and row_conv: one gather per window offset, one GEMM.

Numpy-only (``generic=False``): LoD offsets are host data and the kernels loop over
sequences on the host; a device plugin overrides them.
"""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel
from oar_kernels_cpu.kernels._sequence import array_of, last_level, with_lod


def _windows(off: np.ndarray, start: int, length: int) -> list:
    """Per window offset k: (rows whose window row k lies in their sequence, source rows)."""
    n = int(off[-1])
    rows = np.arange(n)
    lo = np.repeat(off[:-1], np.diff(off))
    hi = np.repeat(off[1:], np.diff(off))
    out = []
    for k in range(length):
        src = rows + start + k
        valid = (src >= lo) & (src < hi)
        out.append((rows[valid], src[valid]))
    return out


def _columns(x: np.ndarray, windows: list) -> np.ndarray:
    n, d = x.shape
    col = np.zeros((n, len(windows) * d), dtype=x.dtype)
    for k, (rows, src) in enumerate(windows):
        col[rows, k * d : (k + 1) * d] = x[src]
    return col


@kernel("sequence_conv", FLOATS, lod=True, generic=False)
def sequence_conv(inputs, attrs):
    x, off, lod = last_level(inputs["X"], "sequence_conv", "X")
    windows = _windows(off, attrs["contextStart"], attrs["contextLength"])
    out = _columns(x, windows) @ array_of(inputs["Filter"])
    return {"Out": with_lod(out, lod)}


@kernel("sequence_conv_grad", FLOATS, lod=True, generic=False)
def sequence_conv_grad(inputs, attrs):
    x, off, lod = last_level(inputs["X"], "sequence_conv_grad", "X")
    w = array_of(inputs["Filter"])
    dout = array_of(inputs["Out@GRAD"])
    windows = _windows(off, attrs["contextStart"], attrs["contextLength"])
    dw = _columns(x, windows).T @ dout
    dcol = dout @ w.T
    dx = np.zeros_like(x)
    d = x.shape[1]
    for k, (rows, src) in enumerate(windows):
        dx[src] += dcol[rows, k * d : (k + 1) * d]  # src is unique for a fixed k
    return {"X@GRAD": with_lod(dx, lod), "Filter@GRAD": dw}


def _row_windows(off: np.ndarray, future: int) -> list:
    return _windows(off, 0, future)


@kernel("row_conv", FLOATS, lod=True, generic=False)
def row_conv(inputs, attrs):
    x, off, lod = last_level(inputs["X"], "row_conv", "X")
    w = array_of(inputs["Filter"])
    out = np.zeros_like(x)
    for k, (rows, src) in enumerate(_row_windows(off, w.shape[0])):
        out[rows] += x[src] * w[k]
    return {"Out": with_lod(out, lod)}


@kernel("row_conv_grad", FLOATS, lod=True, generic=False)
def row_conv_grad(inputs, attrs):
    x, off, lod = last_level(inputs["X"], "row_conv_grad", "X")
    w = array_of(inputs["Filter"])
    dout = array_of(inputs["Out@GRAD"])
    dx = np.zeros_like(x)
    dw = np.zeros_like(w)
    for k, (rows, src) in enumerate(_row_windows(off, w.shape[0])):
        dx[src] += dout[rows] * w[k]
        dw[k] = (dout[rows] * x[src]).sum(axis=0)
    return {"X@GRAD": with_lod(dx, lod), "Filter@GRAD": dw}
