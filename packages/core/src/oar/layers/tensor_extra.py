"""Fluid 1.8's tensor-API layers: flip, index_select, index_sample, meshgrid, allclose,
randperm, nonzero, elementwise_equal, clamp, addcmul, arange, full, full_like, randn."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.framework.dtypes import convert_dtype
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = [
    "flip",
    "index_select",
    "index_sample",
    "meshgrid",
    "allclose",
    "randperm",
    "nonzero",
    "elementwise_equal",
    "clamp",
    "addcmul",
    "arange",
    "full",
    "full_like",
    "randn",
]


def _one(op_type: str, ins: dict, attrs: dict, dtype: Any = None, name: Any = None, out=None):
    helper = LayerHelper(op_type, name=name)
    for arg, v in ins.values():
        check_variable(op_type, arg, v)
    if out is None:
        if dtype is None:
            dtype = next(iter(ins.values()))[1].dtype
        out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(op_type, {s: [v] for s, (_, v) in ins.items()}, {"Out": [out]}, attrs)
    return out


def _int_list(layer: str, arg: str, v: Any) -> list:
    vals = [v] if isinstance(v, int) and not isinstance(v, bool) else v
    if not isinstance(vals, (list, tuple)) or not all(
        isinstance(d, int) and not isinstance(d, bool) for d in vals
    ):
        raise ArgumentTypeError(layer, f"{arg} must be an int or a list of ints, given {v!r}")
    return list(vals)


def flip(input, dims, name=None):
    """Reverse the order of elements along each axis in ``dims``."""
    return _one(
        "flip", {"X": ("input", input)}, {"dims": _int_list("flip", "dims", dims)}, name=name
    )


def index_select(input, index, dim=0):
    """The slices of ``input`` along ``dim`` at the positions in the 1-D ``index``."""
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise ArgumentTypeError("index_select", f"dim must be an int, given {dim!r}")
    return _one("index_select", {"X": ("input", input), "Index": ("index", index)}, {"dim": dim})


def index_sample(x, index):
    """``out[i, j] = x[i, index[i, j]]`` for 2-D ``x`` and ``index``."""
    return _one("index_sample", {"X": ("x", x), "Index": ("index", index)}, {})


def meshgrid(input, name=None):
    """N-D coordinate grids (``ij`` indexing) from a list of 1-D tensors."""
    if is_variable(input):
        input = [input]
    if not isinstance(input, (list, tuple)) or not input:
        raise ArgumentTypeError("meshgrid", f"input must be a list of Variables, given {input!r}")
    check_variable("meshgrid", "input", list(input), allow_list=True)
    helper = LayerHelper("meshgrid", name=name)
    outs = [helper.create_variable_for_type_inference(x.dtype) for x in input]
    helper.append_op("meshgrid", {"X": list(input)}, {"Out": outs}, {})
    return outs


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    """A [1] bool tensor: whether ``|input - other| <= atol + rtol * |other|`` everywhere."""
    attrs = {"rtol": float(rtol), "atol": float(atol), "equal_nan": bool(equal_nan)}
    out = _one(
        "allclose", {"Input": ("input", input), "Other": ("other", other)}, attrs, "bool", name
    )
    out.stop_gradient = True
    return out


def randperm(n, out=None, dtype="int64", device=None, stop_gradient=True, seed=0):
    """A random permutation of ``0 .. n-1``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ArgumentError("randperm", f"n must be a positive int, given {n!r}")
    dtype = convert_dtype(dtype)
    if dtype not in ("int32", "int64", "float32", "float64"):
        raise ArgumentTypeError(
            "randperm", f"dtype must be int32, int64, float32 or float64, given {dtype}"
        )
    helper = LayerHelper("randperm")
    if out is None:
        out = helper.create_variable_for_type_inference(dtype)
    helper.append_op("randperm", {}, {"Out": [out]}, {"n": n, "dtype": dtype, "seed": int(seed)})
    out.stop_gradient = stop_gradient
    return out


def nonzero(input, as_tuple=False):
    """Coordinates of the nonzero elements: [N, rank] int64, or one [N, 1] tensor per axis."""
    from oar.layers.manip import split

    coords = _one("where_index", {"Condition": ("input", input)}, {}, "int64")
    coords.stop_gradient = True
    if not as_tuple:
        return coords
    rank = len(input.shape)
    return [coords] if rank == 1 else list(split(coords, rank, dim=1))


def elementwise_equal(x, y, name=None):
    """Elementwise ``x == y`` as a bool tensor."""
    from oar.layers.compare import equal

    return equal(x, y)


def clamp(input, min=None, max=None, output=None, name=None):
    """Clamp into ``[min, max]``; a bound left as None is open."""
    from oar.layers.clip_ops import clip

    if min is None and max is None:
        raise ArgumentError("clamp", "give min, max or both")
    lo = float("-inf") if min is None else min
    hi = float("inf") if max is None else max
    for arg, v in (("min", lo), ("max", hi)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ArgumentTypeError("clamp", f"{arg} must be a number, given {v!r}")
    return clip(input, float(lo), float(hi), name=name)


def addcmul(input, tensor1, tensor2, value=1.0, out=None, name=None):
    """``input + value * tensor1 * tensor2`` (broadcast as the elementwise ops do)."""
    from oar.layers.elementwise import elementwise_add, elementwise_mul
    from oar.layers.math import scale

    for arg, v in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        check_variable("addcmul", arg, v)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArgumentTypeError("addcmul", f"value must be a number, given {value!r}")
    prod = elementwise_mul(tensor1, tensor2)
    if value != 1:
        prod = scale(prod, scale=float(value))
    res = elementwise_add(input, prod, name=name)
    if out is not None:
        from oar.layers.tensor import assign

        return assign(res, out)
    return res


def arange(start, end, step=1, dtype=None, name=None):
    """Values from ``start`` up to (not including) ``end`` by ``step`` (float32 by default)."""
    from oar.layers.ranges import range as range_

    return range_(start, end, step, "float32" if dtype is None else dtype)


def _check_shape(layer: str, shape: Any) -> list:
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = [shape]
    if not isinstance(shape, (list, tuple)) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
    ):
        raise ArgumentError(layer, f"shape must be a list of non-negative ints, given {shape!r}")
    return list(shape)


def full(shape, fill_value, out=None, dtype=None, device=None, stop_gradient=True, name=None):
    """A tensor of ``shape`` filled with ``fill_value`` (float32 unless ``dtype`` says)."""
    from oar.layers.tensor import fill_constant

    shape = _check_shape("full", shape)
    if isinstance(fill_value, bool) or not isinstance(fill_value, (int, float)):
        raise ArgumentTypeError("full", f"fill_value must be a number, given {fill_value!r}")
    res = fill_constant(shape, "float32" if dtype is None else dtype, fill_value, out=out)
    res.stop_gradient = stop_gradient
    return res


def full_like(input, fill_value, out=None, dtype=None, device=None, stop_gradient=True, name=None):
    """A tensor shaped like ``input`` filled with ``fill_value`` (``input``'s dtype by default)."""
    check_variable("full_like", "input", input)
    if isinstance(fill_value, bool) or not isinstance(fill_value, (int, float)):
        raise ArgumentTypeError("full_like", f"fill_value must be a number, given {fill_value!r}")
    dt = convert_dtype(dtype) if dtype is not None else str(input.dtype)
    attrs = {"value": float(fill_value), "dtype": dt}
    res = _one("fill_any_like", {"X": ("input", input)}, attrs, dt, name, out)
    res.stop_gradient = stop_gradient
    return res


def randn(shape, out=None, dtype=None, device=None, stop_gradient=True, name=None):
    """Standard normal samples of ``shape`` (float32 unless ``dtype`` says)."""
    from oar.layers.ranges import gaussian_random

    shape = _check_shape("randn", shape)
    dt = "float32" if dtype is None else convert_dtype(dtype)
    if dt not in ("float32", "float64"):
        raise ArgumentTypeError("randn", f"dtype must be float32 or float64, given {dt}")
    res = gaussian_random(shape, dtype=dt)
    if out is not None:
        from oar.layers.tensor import assign

        res = assign(res, out)
    res.stop_gradient = stop_gradient
    return res
