"""sequence_pool over the last LoD level: one compiled loop over sequences and rows.

SUM / AVERAGE / SQRT / MAX forward and gradient; FIRST, LAST and anything unusual
(no LoD, a LoD that does not match the rows, non-float dtypes) go to the kernel
this overrides, which also raises the errors. Sums add rows in order, as the numpy
kernel does.
"""

from __future__ import annotations

import numpy as np
from oar.api import LoDTensor

from oar_kernels_numba._fallback import Fallback
from oar_kernels_numba._jit import jit

DTYPES = ("float32", "float64")
FLOAT_DTYPES = frozenset(np.dtype(t) for t in DTYPES)  # dtype.name costs ~1 µs a call
_KINDS = {"SUM": 0, "AVERAGE": 1, "SQRT": 2, "MAX": 3}


@jit
def _pool(x, off, kind, pad, out, index):
    for s in range(off.size - 1):
        a, b = off[s], off[s + 1]
        if b <= a:
            for j in range(x.shape[1]):
                out[s, j] = pad
            continue
        if kind == 3:
            for j in range(x.shape[1]):
                out[s, j] = x[a, j]
                index[s, j] = 0
            for r in range(a + 1, b):
                for j in range(x.shape[1]):
                    if x[r, j] > out[s, j]:
                        out[s, j] = x[r, j]
                        index[s, j] = r - a
            continue
        for j in range(x.shape[1]):
            out[s, j] = x[a, j]
        for r in range(a + 1, b):
            for j in range(x.shape[1]):
                out[s, j] += x[r, j]
        if kind != 0:
            div = out.dtype.type(b - a)
            if kind == 2:
                div = np.sqrt(div)
            for j in range(x.shape[1]):
                out[s, j] /= div


@jit
def _pool_grad(dout, off, kind, index, dx):
    for s in range(off.size - 1):
        a, b = off[s], off[s + 1]
        if b <= a:
            continue
        if kind == 3:
            for j in range(dx.shape[1]):
                dx[a + index[s, j], j] = dout[s, j]
            continue
        scale = dx.dtype.type(1)
        if kind != 0:
            scale = dx.dtype.type(b - a)
            if kind == 2:
                scale = np.sqrt(scale)
        for r in range(a, b):
            for j in range(dx.shape[1]):
                dx[r, j] = dout[s, j] / scale


def _lod_input(t):
    """(2-D contiguous rows, last-level offsets, the LoD) or None when this kernel does not apply."""
    if not isinstance(t, LoDTensor):
        return None
    lod = t.lod()
    x = np.asarray(t)
    if not lod or x.ndim < 1 or x.dtype not in FLOAT_DTYPES or not x.flags.c_contiguous:
        return None
    off = np.asarray(lod[-1], dtype=np.int64)
    if off.size == 0 or off[0] != 0 or off[-1] != x.shape[0] or np.any(np.diff(off) < 0):
        return None
    return x.reshape(x.shape[0], -1), off, lod


class _Kernels:
    def __init__(self, device: str, priority: int) -> None:
        self.fb = {
            op: Fallback(op, device, priority) for op in ("sequence_pool", "sequence_pool_grad")
        }

    def sequence_pool(self, inputs, attrs):
        got = _lod_input(inputs["X"])
        kind = _KINDS.get(attrs["pooltype"])
        if got is None or kind is None:
            return self.fb["sequence_pool"](_dtype(inputs["X"]), inputs, attrs)
        x2, off, lod = got
        x = np.asarray(inputs["X"])
        n = off.size - 1
        out = np.empty((n, x2.shape[1]), x.dtype)
        index = np.zeros((n, x2.shape[1]), np.int32)
        _pool(x2, off, kind, x.dtype.type(attrs["pad_value"]), out, index)
        shape = (n,) + x.shape[1:]
        out = out.reshape(shape)
        return {
            "Out": LoDTensor(out, lod[:-1]) if lod[:-1] else out,
            "MaxIndex": index.reshape(shape),
        }

    def sequence_pool_grad(self, inputs, attrs):
        got = _lod_input(inputs["X"])
        kind = _KINDS.get(attrs["pooltype"])
        dout = np.asarray(inputs["Out@GRAD"])
        if got is None or kind is None or dout.dtype != got[0].dtype:
            return self.fb["sequence_pool_grad"](_dtype(inputs["X"]), inputs, attrs)
        x2, off, lod = got
        n = off.size - 1
        dout2 = np.ascontiguousarray(dout).reshape(n, x2.shape[1])
        index = np.zeros((n, x2.shape[1]), np.int64)
        if kind == 3:
            index = np.ascontiguousarray(np.asarray(inputs["MaxIndex"]), np.int64).reshape(
                index.shape
            )
        dx = np.zeros(x2.shape, x2.dtype) if kind == 3 else np.empty(x2.shape, x2.dtype)
        _pool_grad(dout2, off, kind, index, dx)
        dx = dx.reshape(np.asarray(inputs["X"]).shape)
        return {"X@GRAD": LoDTensor(dx, lod)}


def _dtype(t) -> str:
    return np.asarray(t).dtype.name


def register(registry, family: str, device: str, priority: int) -> None:
    k = _Kernels(device, priority)
    registry.register_kernel(
        "sequence_pool", device, DTYPES, k.sequence_pool, priority, lod=True, generic=False
    )
    registry.register_kernel(
        "sequence_pool_grad",
        device,
        DTYPES,
        k.sequence_pool_grad,
        priority,
        lod=True,
        generic=False,
    )
