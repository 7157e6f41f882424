"""Indexing layers: slice, strided_slice, gather, gather_nd, scatter, pad, pad2d."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = ["slice", "strided_slice", "gather", "gather_nd", "scatter", "pad", "pad2d"]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _const(v: int) -> Any:
    from oar.layers.tensor import fill_constant

    return fill_constant([1], "int32", int(v))


def _slice_common(layer: str, input: Any, axes: Sequence, lists: dict) -> tuple:
    """Validate axes and starts/ends(/strides); Variables become *Tensor or *TensorList inputs."""
    check_variable(layer, "input", input)
    rank = len(input.shape)
    if not isinstance(axes, (list, tuple)) or not all(_is_int(a) for a in axes):
        raise ArgumentTypeError(layer, f"axes must be a list of ints, given {axes!r}")
    for a in axes:
        if not 0 <= a < rank:
            raise ArgumentError(
                layer,
                f"axes {list(axes)} hold {a}, out of range for input of rank {rank} "
                f"(shape {list(input.shape)})",
            )
    if len(set(axes)) != len(axes):
        raise ArgumentError(layer, f"axes {list(axes)} repeat a dim")
    inputs: dict = {"Input": [input]}
    attrs: dict = {"axes": list(axes)}
    for name, value in lists.items():
        key = name.capitalize()
        if is_variable(value):
            inputs[key + "Tensor"] = [value]
            attrs[name] = [-1] * len(axes)
            continue
        if not isinstance(value, (list, tuple)) or len(value) != len(axes):
            raise ArgumentError(
                layer,
                f"{name} must be a list with one entry per axis ({len(axes)}), given {value!r}",
            )
        if any(is_variable(v) for v in value):
            inputs[key + "TensorList"] = [v if is_variable(v) else _const(v) for v in value]
            attrs[name] = [-1 if is_variable(v) else int(v) for v in value]
        else:
            if not all(_is_int(v) for v in value):
                raise ArgumentTypeError(
                    layer, f"{name} must hold ints or Variables, given {list(value)}"
                )
            attrs[name] = [int(v) for v in value]
    attrs["infer_flags"] = [1] * len(axes)
    return inputs, attrs


def slice(input: Any, axes: Sequence, starts: Any, ends: Any) -> Any:  # Fluid's name
    """``input[starts:ends]`` along each of ``axes`` (negative bounds count from the end, then clamp)."""
    helper = LayerHelper("slice")
    inputs, attrs = _slice_common("slice", input, axes, {"starts": starts, "ends": ends})
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("slice", inputs, {"Out": [out]}, attrs)
    return out


def strided_slice(input: Any, axes: Sequence, starts: Any, ends: Any, strides: Any) -> Any:
    """``input[starts:ends:strides]`` along each of ``axes`` (Python slice rules; strides may be negative)."""
    helper = LayerHelper("strided_slice")
    inputs, attrs = _slice_common(
        "strided_slice", input, axes, {"starts": starts, "ends": ends, "strides": strides}
    )
    if any(s == 0 for s in attrs["strides"]) and "StridesTensor" not in inputs:
        raise ArgumentError("strided_slice", f"strides must not be 0, given {list(strides)}")
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("strided_slice", inputs, {"Out": [out]}, attrs)
    return out


def gather(input: Any, index: Any, overwrite: bool = True) -> Any:
    """Rows ``input[index]`` along dim 0 (``index`` 1-D int32/int64)."""
    helper = LayerHelper("gather")
    check_variable("gather", "input", input)
    check_variable("gather", "index", index)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "gather", {"X": [input], "Index": [index]}, {"Out": [out]}, {"overwrite": bool(overwrite)}
    )
    return out


def gather_nd(input: Any, index: Any, name: str | None = None) -> Any:
    """Slices of ``input`` addressed by the last dim of ``index`` (a prefix of input's dims)."""
    helper = LayerHelper("gather_nd", name=name)
    check_variable("gather_nd", "input", input)
    check_variable("gather_nd", "index", index)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("gather_nd", {"X": [input], "Index": [index]}, {"Out": [out]})
    return out


def scatter(
    input: Any, index: Any, updates: Any, name: str | None = None, overwrite: bool = True
) -> Any:
    """A copy of ``input`` with rows ``index`` replaced by (or, overwrite=False, summed from) ``updates``."""
    helper = LayerHelper("scatter", name=name)
    check_variable("scatter", "input", input)
    check_variable("scatter", "index", index)
    check_variable("scatter", "updates", updates)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "scatter",
        {"X": [input], "Ids": [index], "Updates": [updates]},
        {"Out": [out]},
        {"overwrite": bool(overwrite)},
    )
    return out


def pad(x: Any, paddings: Sequence, pad_value: float = 0.0, name: str | None = None) -> Any:
    """Constant padding: ``paddings`` = [before_0, after_0, before_1, after_1, ...]."""
    helper = LayerHelper("pad", name=name)
    check_variable("pad", "x", x)
    if not isinstance(paddings, (list, tuple)) or len(paddings) != 2 * len(x.shape):
        raise ArgumentError(
            "pad",
            f"paddings must have 2 * rank = {2 * len(x.shape)} entries for x of shape "
            f"{list(x.shape)}, given {paddings!r}",
        )
    if not all(_is_int(p) and p >= 0 for p in paddings):
        raise ArgumentError("pad", f"paddings must be non-negative ints, given {list(paddings)}")
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "pad",
        {"X": [x]},
        {"Out": [out]},
        {"paddings": [int(p) for p in paddings], "pad_value": float(pad_value)},
    )
    return out


def pad2d(
    input: Any,
    paddings: Any = (0, 0, 0, 0),
    mode: str = "constant",
    pad_value: float = 0.0,
    data_format: str = "NCHW",
    name: str | None = None,
) -> Any:
    """Pad the H and W dims of a 4-D tensor: [top, bottom, left, right], constant/reflect/edge."""
    helper = LayerHelper("pad2d", name=name)
    check_variable("pad2d", "input", input)
    if mode not in ("constant", "reflect", "edge"):
        raise ArgumentError(
            "pad2d", f"mode must be 'constant', 'reflect' or 'edge', given {mode!r}"
        )
    if data_format not in ("NCHW", "NHWC"):
        raise ArgumentError("pad2d", f"data_format must be 'NCHW' or 'NHWC', given {data_format!r}")
    inputs: dict = {"X": [input]}
    attrs: dict = {"mode": mode, "pad_value": float(pad_value), "data_format": data_format}
    if is_variable(paddings):
        inputs["Paddings"] = [paddings]
    else:
        if (
            not isinstance(paddings, (list, tuple))
            or len(paddings) != 4
            or not all(_is_int(p) and p >= 0 for p in paddings)
        ):
            raise ArgumentError(
                "pad2d",
                f"paddings must be 4 non-negative ints [top, bottom, left, right], "
                f"given {paddings!r}",
            )
        attrs["paddings"] = [int(p) for p in paddings]
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("pad2d", inputs, {"Out": [out]}, attrs)
    return out
