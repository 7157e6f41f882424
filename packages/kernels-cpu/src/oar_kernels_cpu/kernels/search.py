"""numpy kernels for arg_max/arg_min, argsort, where_index and cumsum."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


def _arg(fn):
    def forward(inputs, attrs):
        x = inputs["X"]
        axis = attrs["axis"] % max(x.ndim, 1)
        out = fn(x, axis=axis, keepdims=attrs["keepdims"])
        dtype = "int64" if attrs["dtype"] in (-1, None) else np.dtype(attrs["dtype"]).name
        out = xp.asarray(out, dtype=dtype)
        return {"Out": out.reshape(1) if out.ndim == 0 else out}

    return forward


kernel("arg_max")(_arg(xp.argmax))
kernel("arg_min")(_arg(xp.argmin))


@kernel("argsort")
def argsort(inputs, attrs):
    x = inputs["X"]
    axis = attrs["axis"] % x.ndim
    idx = xp.argsort(-x if attrs["descending"] else x, axis=axis, kind="stable")
    return {"Out": xp.take_along_axis(x, idx, axis), "Indices": idx.astype(np.int64, copy=False)}


@kernel("argsort_grad")
def argsort_grad(inputs, attrs):
    x, idx, d = inputs["X"], inputs["Indices"], inputs["Out@GRAD"]
    dx = xp.empty_like(x)
    xp.put_along_axis(dx, idx, d, attrs["axis"] % x.ndim)
    return {"X@GRAD": dx}


@kernel("where_index")
def where_index(inputs, attrs):
    return {"Out": xp.argwhere(inputs["Condition"]).astype(np.int64)}


@kernel("cumsum")
def cumsum(inputs, attrs):
    x = inputs["X"]
    axis = attrs["axis"] % x.ndim
    if attrs["reverse"]:
        x = xp.flip(x, axis)
    out = xp.cumsum(x, axis=axis, dtype=x.dtype)
    if attrs["exclusive"]:
        out = out - x
    if attrs["reverse"]:
        out = xp.flip(out, axis)
    return {"Out": out}
