"""numpy kernels for clip, clip_by_norm and norm."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel

xp = array_module(__name__)


def _bounds(inputs, attrs):
    lo = (
        float(xp.asarray(inputs["Min"]).reshape(-1)[0])
        if inputs.get("Min") is not None
        else attrs["min"]
    )
    hi = (
        float(xp.asarray(inputs["Max"]).reshape(-1)[0])
        if inputs.get("Max") is not None
        else attrs["max"]
    )
    if lo > hi:
        raise ValueError(f"clip: min {lo} exceeds max {hi}")
    return lo, hi


@kernel("clip", FLOATS)
def clip(inputs, attrs):
    x = inputs["X"]
    lo, hi = _bounds(inputs, attrs)
    return {"Out": xp.clip(x, x.dtype.type(lo), x.dtype.type(hi))}


@kernel("clip_grad", FLOATS)
def clip_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    lo, hi = _bounds(inputs, attrs)
    return {"X@GRAD": d * ((x > lo) & (x < hi))}


@kernel("clip_by_norm", FLOATS)
def clip_by_norm(inputs, attrs):
    x = inputs["X"]
    norm = float(xp.sqrt(xp.vdot(x, x)))
    m = attrs["max_norm"]
    return {"Out": x * x.dtype.type(m / norm) if norm > m else x.copy()}


@kernel("clip_by_norm_grad", FLOATS)
def clip_by_norm_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    norm = float(xp.sqrt(xp.vdot(x, x)))
    m = attrs["max_norm"]
    if norm <= m:
        return {"X@GRAD": d.copy()}
    # out = m x / |x|:  d out = m/|x| (d - x <x, d> / |x|^2)
    dx = (m / norm) * (d - x * (float(xp.vdot(x, d)) / (norm * norm)))
    return {"X@GRAD": dx.astype(x.dtype, copy=False)}


@kernel("norm", FLOATS)
def norm(inputs, attrs):
    x = inputs["X"]
    axis = attrs["axis"] % x.ndim
    n = xp.sqrt(xp.square(x).sum(axis=axis, keepdims=True) + x.dtype.type(attrs["epsilon"]))
    return {"Out": x / n, "Norm": n}


@kernel("norm_grad", FLOATS)
def norm_grad(inputs, attrs):
    x, n, d = inputs["X"], inputs["Norm"], inputs["Out@GRAD"]
    axis = attrs["axis"] % x.ndim
    y = x / n
    return {"X@GRAD": (d - y * (d * y).sum(axis=axis, keepdims=True)) / n}
