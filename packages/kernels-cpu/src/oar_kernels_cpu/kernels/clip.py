"""numpy kernels for clip, clip_by_norm and squared_l2_norm (SelectedRows gradients kept sparse)."""

from __future__ import annotations

import numpy as np
from oar.lod_tensor import SelectedRows

from oar_kernels_cpu.kernels import FLOATS, kernel
from oar_kernels_cpu.kernels.optimizer_updates import _merge_rows


def _bounds(inputs, attrs):
    lo = inputs.get("Min")
    hi = inputs.get("Max")
    lo = float(np.asarray(lo).reshape(-1)[0]) if lo is not None else attrs["min"]
    hi = float(np.asarray(hi).reshape(-1)[0]) if hi is not None else attrs["max"]
    return lo, hi


@kernel("clip", FLOATS, selected_rows=True)
def clip(inputs, attrs):
    x = inputs["X"]
    lo, hi = _bounds(inputs, attrs)
    if isinstance(x, SelectedRows):
        rows, v = _merge_rows(x)
        return {"Out": SelectedRows(rows, x.height(), np.clip(v, lo, hi))}
    return {"Out": np.clip(x, lo, hi).astype(x.dtype, copy=False)}


@kernel("clip_grad", FLOATS)
def clip_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    lo, hi = _bounds(inputs, attrs)
    return {"X@GRAD": np.where((x > lo) & (x < hi), d, 0).astype(d.dtype, copy=False)}


def _norm(v) -> float:
    return float(np.sqrt(np.sum(np.square(v, dtype=np.float64))))


@kernel("clip_by_norm", FLOATS, selected_rows=True)
def clip_by_norm(inputs, attrs):
    x = inputs["X"]
    max_norm = attrs["max_norm"]
    if isinstance(x, SelectedRows):
        rows, v = _merge_rows(x)
        n = _norm(v)
        scale = max_norm / n if n > max_norm else 1.0
        return {"Out": SelectedRows(rows, x.height(), (v * scale).astype(v.dtype, copy=False))}
    n = _norm(x)
    if n <= max_norm:
        return {"Out": x.copy()}
    return {"Out": (x * (max_norm / n)).astype(x.dtype, copy=False)}


@kernel("squared_l2_norm", FLOATS, selected_rows=True)
def squared_l2_norm(inputs, attrs):
    x = inputs["X"]
    if isinstance(x, SelectedRows):
        x = _merge_rows(x)[1]
    return {"Out": np.array([np.sum(np.square(x, dtype=np.float64))], dtype=x.dtype)}


@kernel("squared_l2_norm_grad", FLOATS)
def squared_l2_norm_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    return {"X@GRAD": (2 * float(np.asarray(d).reshape(-1)[0])) * x}
