"""numpy kernels for reshape2 (a view; XShape carries the input shape for the gradient)."""

from __future__ import annotations

from oar.api import resolve_shape

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


@kernel("reshape2")
def reshape2(inputs, attrs):
    x = inputs["X"]
    if inputs.get("Shape") is not None:
        shape = [int(d) for d in xp.asarray(inputs["Shape"]).reshape(-1)]
    elif inputs.get("ShapeTensor"):
        shape = [int(xp.asarray(t).reshape(-1)[0]) for t in inputs["ShapeTensor"]]
    else:
        shape = attrs["shape"]
    out = x.reshape(resolve_shape(list(x.shape), shape))
    return {"Out": out, "XShape": xp.empty((0,) + x.shape, dtype=x.dtype)}


@kernel("reshape2_grad")
def reshape2_grad(inputs, attrs):
    return {"X@GRAD": inputs["Out@GRAD"].reshape(inputs["XShape"].shape[1:])}
