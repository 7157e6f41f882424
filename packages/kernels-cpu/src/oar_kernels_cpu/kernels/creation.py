"""numpy kernels for tensor-creating ops (constants and random fills)."""

from __future__ import annotations

import math

from oar_kernels_cpu.kernels import array_module, kernel
from oar_kernels_cpu.kernels._util import normal, rng_for

xp = array_module(__name__)
_CHUNK = 1 << 18


def _shape(inputs, attrs):
    st = inputs.get("ShapeTensor")
    if st is not None:
        return [int(d) for d in xp.asarray(st).reshape(-1)]
    return [int(d) for d in attrs["shape"]]


@kernel("fill_constant")
def fill_constant(inputs, attrs):
    value = attrs["str_value"] or attrs["value"]
    value = float(value) if isinstance(value, str) else value
    out = xp.empty(_shape(inputs, attrs), dtype=attrs["dtype"])
    out.fill(value)
    return {"Out": out}


@kernel("fill_constant_batch_size_like")
def fill_constant_batch_size_like(inputs, attrs):
    shape = list(attrs["shape"])
    shape[attrs["output_dim_idx"]] = xp.shape(inputs["Input"])[attrs["input_dim_idx"]]
    value = float(attrs["str_value"]) if attrs["str_value"] else attrs["value"]
    return {"Out": xp.full(shape, value, dtype=attrs["dtype"])}


@kernel("fill_zeros_like")
def fill_zeros_like(inputs, attrs):
    return {"Out": xp.zeros_like(inputs["X"])}


@kernel("fill_any_like")
def fill_any_like(inputs, attrs):
    x = inputs["X"]
    return {"Out": xp.full(x.shape, attrs["value"], dtype=attrs["dtype"] or x.dtype)}


@kernel("uniform_random")
def uniform_random(inputs, attrs):
    shape = _shape(inputs, attrs)
    rng = rng_for(xp, attrs["seed"])
    out = xp.empty(shape, dtype=attrs["dtype"])
    flat = out.reshape(-1)
    # drawn in chunks (the same stream as one draw): a large table never has a float64 twin
    for at in range(0, flat.size, _CHUNK):
        n = min(_CHUNK, flat.size - at)
        flat[at : at + n] = rng.uniform(attrs["min"], attrs["max"], n)
    if attrs["diag_num"] > 0:  # Fluid: flattened positions i * (diag_step + 1)
        flat = out.reshape(-1)
        step = attrs["diag_step"] + 1
        last = (attrs["diag_num"] - 1) * step
        if last >= flat.size:
            raise ValueError(
                f"uniform_random: diag_num={attrs['diag_num']} with diag_step={attrs['diag_step']} "
                f"reaches position {last}, past the {flat.size} elements of shape {list(shape)}"
            )
        flat[: last + 1 : step] = attrs["diag_val"]
    return {"Out": out}


@kernel("gaussian_random")
def gaussian_random(inputs, attrs):
    shape = _shape(inputs, attrs)
    out = normal(rng_for(xp, attrs["seed"]), attrs["mean"], attrs["std"], shape)
    return {"Out": out.astype(attrs["dtype"])}


@kernel("truncated_gaussian_random")
def truncated_gaussian_random(inputs, attrs):
    rng = rng_for(xp, attrs["seed"])
    n = math.prod(attrs["shape"])
    out = rng.standard_normal(n)
    bad = xp.abs(out) > 2
    while bad.any():
        out[bad] = rng.standard_normal(int(bad.sum()))
        bad = xp.abs(out) > 2
    out = out.reshape(attrs["shape"]) * attrs["std"] + attrs["mean"]
    return {"Out": out.astype(attrs["dtype"])}


_VALUE_ATTR = {
    "float32": "fp32_values",
    "float64": "fp64_values",
    "float16": "fp32_values",
    "int32": "int32_values",
    "int64": "int64_values",
    "bool": "bool_values",
    "int16": "int32_values",
    "int8": "int32_values",
    "uint8": "int32_values",
}


@kernel("assign_value")
def assign_value(inputs, attrs):
    dtype = attrs["dtype"]
    values = attrs[_VALUE_ATTR[dtype]]
    return {"Out": xp.array(values, dtype=dtype).reshape(attrs["shape"])}
