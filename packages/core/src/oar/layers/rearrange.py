"""Rearranging layers: pixel_shuffle, shuffle_channel, crop_tensor, pad_constant_like, tril, triu,
scatter_nd_add, scatter_nd, randint, rank, logsumexp."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from oar.errors import ArgumentError, ArgumentTypeError
from oar.framework.dtypes import convert_dtype
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = [
    "pixel_shuffle",
    "shuffle_channel",
    "crop_tensor",
    "pad_constant_like",
    "tril",
    "triu",
    "scatter_nd_add",
    "scatter_nd",
    "randint",
    "rank",
    "logsumexp",
]


def _pos_int(layer: str, arg: str, v: Any) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise ArgumentError(layer, f"{arg} must be a positive int, given {v!r}")
    return v


def _unary(op: str, layer: str, x: Any, attrs: dict, name: str | None = None) -> Any:
    helper = LayerHelper(layer, name=name)
    check_variable(layer, "x", x)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(op, {"X": [x]}, {"Out": [out]}, attrs)
    return out


def pixel_shuffle(x: Any, upscale_factor: int) -> Any:
    """[N, C*r*r, H, W] -> [N, C, H*r, W*r] (sub-pixel convolution's rearrangement)."""
    return _unary(
        "pixel_shuffle",
        "pixel_shuffle",
        x,
        {"upscale_factor": _pos_int("pixel_shuffle", "upscale_factor", upscale_factor)},
    )


def shuffle_channel(x: Any, group: int, name: str | None = None) -> Any:
    """ShuffleNet's channel shuffle: [N, g*k, H, W] viewed as (g, k) channels, transposed to (k, g)."""
    return _unary(
        "shuffle_channel",
        "shuffle_channel",
        x,
        {"group": _pos_int("shuffle_channel", "group", group)},
        name,
    )


def _int_list_or_tensor(layer: str, arg: str, value: Any, inputs: dict, slot: str) -> list:
    from oar.layers.tensor import fill_constant

    if is_variable(value):
        inputs[slot] = [value]
        return []
    if not isinstance(value, (list, tuple)):
        raise ArgumentTypeError(layer, f"{arg} must be a list, tuple or Variable, given {value!r}")
    if any(is_variable(v) for v in value):
        inputs[slot + "Tensor"] = [
            v if is_variable(v) else fill_constant([1], "int32", int(v)) for v in value
        ]
        return [-1 if is_variable(v) else int(v) for v in value]
    return [int(v) for v in value]


def crop_tensor(x: Any, shape: Any = None, offsets: Any = None, name: str | None = None) -> Any:
    """The block of ``x`` of ``shape`` (-1: to the end) starting at ``offsets`` (default 0s)."""
    helper = LayerHelper("crop_tensor", name=name)
    check_variable("crop_tensor", "x", x)
    inputs: dict = {"X": [x]}
    attrs: dict = {}
    if shape is None:
        raise ArgumentError("crop_tensor", "shape is required")
    attrs["shape"] = _int_list_or_tensor("crop_tensor", "shape", shape, inputs, "Shape")
    if offsets is None:
        offsets = [0] * len(x.shape)
    attrs["offsets"] = _int_list_or_tensor("crop_tensor", "offsets", offsets, inputs, "Offsets")
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("crop_tensor", inputs, {"Out": [out]}, attrs)
    return out


def pad_constant_like(x: Any, y: Any, pad_value: float = 0.0, name: str | None = None) -> Any:
    """``y`` padded at the end of each dim with ``pad_value`` up to ``x``'s shape."""
    helper = LayerHelper("pad_constant_like", name=name)
    check_variable("pad_constant_like", "x", x)
    check_variable("pad_constant_like", "y", y)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "pad_constant_like", {"X": [x], "Y": [y]}, {"Out": [out]}, {"pad_value": float(pad_value)}
    )
    return out


def _tri(layer: str, input: Any, diagonal: int, lower: bool, name: str | None) -> Any:
    if not isinstance(diagonal, int) or isinstance(diagonal, bool):
        raise ArgumentTypeError(layer, f"diagonal must be an int, given {diagonal!r}")
    helper = LayerHelper(layer, name=name)
    check_variable(layer, "input", input)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "tril_triu", {"X": [input]}, {"Out": [out]}, {"diagonal": diagonal, "lower": lower}
    )
    return out


def tril(input: Any, diagonal: int = 0, name: str | None = None) -> Any:
    """The lower triangle (on and below diagonal ``diagonal``) of the last two dims; the rest 0."""
    return _tri("tril", input, diagonal, True, name)


def triu(input: Any, diagonal: int = 0, name: str | None = None) -> Any:
    """The upper triangle (on and above diagonal ``diagonal``) of the last two dims; the rest 0."""
    return _tri("triu", input, diagonal, False, name)


def scatter_nd_add(ref: Any, index: Any, updates: Any, name: str | None = None) -> Any:
    """A copy of ``ref`` with ``updates`` added at the positions ``index`` addresses (repeats accumulate)."""
    helper = LayerHelper("scatter_nd_add", name=name)
    for arg, v in (("ref", ref), ("index", index), ("updates", updates)):
        check_variable("scatter_nd_add", arg, v)
    out = helper.create_variable_for_type_inference(ref.dtype)
    helper.append_op(
        "scatter_nd_add", {"X": [ref], "Index": [index], "Updates": [updates]}, {"Out": [out]}
    )
    return out


def scatter_nd(index: Any, updates: Any, shape: Sequence, name: str | None = None) -> Any:
    """A zero tensor of ``shape`` with ``updates`` added at ``index``."""
    from oar.layers.tensor import zeros

    check_variable("scatter_nd", "updates", updates)
    return scatter_nd_add(zeros(shape, updates.dtype), index, updates, name)


def randint(
    low: int,
    high: int | None = None,
    shape: Any = None,
    out: Any = None,
    dtype: Any = None,
    device: Any = None,
    stop_gradient: bool = False,
    seed: int = 0,
    name: str | None = None,
) -> Any:
    """Integers drawn uniformly from [low, high) (one bound: [0, low))."""
    helper = LayerHelper("randint", name=name)
    if high is None:
        low, high = 0, low
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)) or low >= high:
        raise ArgumentError("randint", f"need ints low < high, given low={low!r}, high={high!r}")
    dtype = convert_dtype(dtype or "int64")
    if dtype not in ("int32", "int64"):
        raise ArgumentTypeError("randint", f"dtype must be int32 or int64, given {dtype}")
    inputs: dict = {}
    attrs: dict = {"low": low, "high": high, "seed": seed, "dtype": dtype}
    if shape is None:
        raise ArgumentError("randint", "shape is required")
    if is_variable(shape):
        inputs["ShapeTensor"] = [shape]
    elif isinstance(shape, (list, tuple)) and any(is_variable(d) for d in shape):
        from oar.layers.tensor import fill_constant

        inputs["ShapeTensorList"] = [
            d if is_variable(d) else fill_constant([1], "int64", d) for d in shape
        ]
    else:
        if (
            not isinstance(shape, (list, tuple))
            or not shape
            or not all(isinstance(d, int) and d > 0 for d in shape)
        ):
            raise ArgumentError(
                "randint", f"shape must be a non-empty list of positive ints, given {shape!r}"
            )
        attrs["shape"] = list(shape)
    out = out or helper.create_variable_for_type_inference(dtype)
    helper.append_op("randint", inputs, {"Out": [out]}, attrs)
    out.stop_gradient = True
    return out


def rank(input: Any) -> Any:
    """The rank of ``input`` as an int32 constant tensor (known when the program is built)."""
    from oar.layers.tensor import assign

    check_variable("rank", "input", input)
    return assign(np.array(len(input.shape), dtype="int32"))  # a 0-d tensor, as Fluid gives


def logsumexp(
    x: Any, dim: Any = None, keepdim: bool = False, out: Any = None, name: str | None = None
) -> Any:
    """log(sum(exp(x))) over ``dim`` (all dims when None), computed stably around the maximum."""
    from oar.layers.activation import exp, log
    from oar.layers.elementwise import elementwise_add, elementwise_sub
    from oar.layers.reduce import reduce_max, reduce_sum

    check_variable("logsumexp", "x", x)
    m = reduce_max(x, dim=dim, keep_dim=True)
    m.stop_gradient = True  # d/dm cancels exactly; treating it as a constant keeps the graph small
    s = log(reduce_sum(exp(elementwise_sub(x, m)), dim=dim, keep_dim=True))
    res = elementwise_add(s, m)
    if not keepdim:
        from oar.layers.manip import squeeze

        rank_ = len(x.shape)
        dims = list(range(rank_)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
        dims = sorted({d % rank_ for d in dims})
        if len(dims) == rank_:
            from oar.layers.reshape import reshape

            return reshape(res, [1])
        res = squeeze(res, dims)
    return res
