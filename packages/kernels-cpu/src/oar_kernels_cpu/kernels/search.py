"""numpy kernels for arg_max/arg_min, argsort, where_index and cumsum."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import kernel


def _arg(fn):
    def forward(inputs, attrs):
        x = inputs["X"]
        axis = attrs["axis"] % max(x.ndim, 1)
        out = fn(x, axis=axis, keepdims=attrs["keepdims"])
        dtype = "int64" if attrs["dtype"] in (-1, None) else np.dtype(attrs["dtype"]).name
        out = np.asarray(out, dtype=dtype)
        return {"Out": out.reshape(1) if out.ndim == 0 else out}

    return forward


kernel("arg_max")(_arg(np.argmax))
kernel("arg_min")(_arg(np.argmin))


@kernel("argsort")
def argsort(inputs, attrs):
    x = inputs["X"]
    axis = attrs["axis"] % x.ndim
    idx = np.argsort(-x if attrs["descending"] else x, axis=axis, kind="stable")
    return {"Out": np.take_along_axis(x, idx, axis), "Indices": idx.astype(np.int64, copy=False)}


@kernel("argsort_grad")
def argsort_grad(inputs, attrs):
    x, idx, d = inputs["X"], inputs["Indices"], inputs["Out@GRAD"]
    dx = np.empty_like(x)
    np.put_along_axis(dx, idx, d, attrs["axis"] % x.ndim)
    return {"X@GRAD": dx}


@kernel("where_index")
def where_index(inputs, attrs):
    return {"Out": np.argwhere(inputs["Condition"]).astype(np.int64)}


@kernel("cumsum")
def cumsum(inputs, attrs):
    x = inputs["X"]
    axis = attrs["axis"] % x.ndim
    if attrs["reverse"]:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis=axis, dtype=x.dtype)
    if attrs["exclusive"]:
        out = out - x
    if attrs["reverse"]:
        out = np.flip(out, axis)
    return {"Out": out}
