"""numpy kernels for clip and clip_by_norm (dense; SelectedRows inputs arrive densified)."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel


def _bounds(inputs, attrs):
    lo = float(np.asarray(inputs["Min"]).reshape(-1)[0]) if inputs.get("Min") is not None else attrs["min"]
    hi = float(np.asarray(inputs["Max"]).reshape(-1)[0]) if inputs.get("Max") is not None else attrs["max"]
    return lo, hi


@kernel("clip", FLOATS)
def clip(inputs, attrs):
    x = inputs["X"]
    lo, hi = _bounds(inputs, attrs)
    return {"Out": np.clip(x, x.dtype.type(lo), x.dtype.type(hi))}


@kernel("clip_grad", FLOATS)
def clip_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    lo, hi = _bounds(inputs, attrs)
    return {"X@GRAD": d * ((x > lo) & (x < hi))}


@kernel("clip_by_norm", FLOATS)
def clip_by_norm(inputs, attrs):
    x = inputs["X"]
    norm = float(np.sqrt(np.vdot(x, x)))
    m = attrs["max_norm"]
    return {"Out": x * x.dtype.type(m / norm) if norm > m else x.copy()}
