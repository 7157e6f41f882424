"""numpy kernel for cast."""

from __future__ import annotations

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


@kernel("cast")
def cast(inputs, attrs):
    x = inputs["X"]
    dtype = attrs["out_dtype"]
    return {"Out": x if x.dtype == dtype else x.astype(dtype)}
