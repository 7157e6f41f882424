"""Dense embedding gradients: one compiled scatter-add over the ids.

``lookup_table(_v2)_grad`` with ``is_sparse=False`` sums each row of ``Out@GRAD``
into the row of ``W@GRAD`` its id names (numpy's ``np.add.at``, in the same order,
so bit for bit its result); ``padding_idx`` rows get nothing. Sparse gradients (a
SelectedRows wrap, no arithmetic) and ids out of range (the numpy kernel raises the
error) go to the kernels this overrides.
"""

from __future__ import annotations

import numpy as np

from oar_kernels_numba._fallback import Fallback
from oar_kernels_numba._jit import jit

DTYPES = ("float32", "float64")
FLOAT_DTYPES = frozenset(np.dtype(t) for t in DTYPES)  # dtype.name costs ~1 µs a call


@jit
def _scatter_rows(ids, dv, pad, dw):
    """dw[ids[k]] += dv[k] for every k with ids[k] != pad; False if an id is out of range."""
    h = dw.shape[0]
    for k in range(ids.size):
        r = ids[k]
        if r < 0 or r >= h:
            return False
    for k in range(ids.size):
        r = ids[k]
        if r == pad:
            continue
        for j in range(dw.shape[1]):
            dw[r, j] += dv[k, j]
    return True


def _grad(op_type: str, fb: Fallback):
    def grad(inputs, attrs):
        w, ids, d = inputs["W"], inputs["Ids"], inputs["Out@GRAD"]
        if (
            attrs["is_sparse"]
            or type(d) is not np.ndarray
            or d.dtype != w.dtype
            or w.dtype not in FLOAT_DTYPES
            or w.ndim != 2
        ):
            return fb(w.dtype, inputs, attrs)
        flat = np.ascontiguousarray(np.asarray(ids).reshape(-1), dtype=np.int64)
        if d.size != flat.size * w.shape[1]:
            return fb(w.dtype, inputs, attrs)
        pad = attrs["padding_idx"]
        pad = pad + w.shape[0] if pad < -1 else pad
        dw = np.zeros(w.shape, w.dtype)
        dv = np.ascontiguousarray(d).reshape(flat.size, w.shape[1])
        if not _scatter_rows(flat, dv, pad, dw):
            return fb(w.dtype, inputs, attrs)  # raises the out-of-range error
        return {"W@GRAD": dw}

    return grad


def register(registry, family: str, device: str, priority: int) -> None:
    for op in ("lookup_table_grad", "lookup_table_v2_grad"):
        registry.register_kernel(
            op, device, DTYPES, _grad(op, Fallback(op, device, priority)), priority
        )
