"""Shape-manipulation layers: concat, split, stack, unstack, transpose, squeeze, unsqueeze, flatten,
expand, expand_as (Fluid 1.5-1.8 signatures)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = [
    "concat",
    "split",
    "stack",
    "unstack",
    "transpose",
    "squeeze",
    "unsqueeze",
    "flatten",
    "expand",
    "expand_as",
]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int_const(v: int) -> Any:
    from oar.layers.tensor import fill_constant

    return fill_constant([1], "int32", int(v))


def _int_list(layer: str, arg: str, value: Any) -> list:
    if _is_int(value):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(_is_int(v) for v in value):
        raise ArgumentTypeError(layer, f"{arg} must be an int or a list of ints, given {value!r}")
    return [int(v) for v in value]


def _tensor_list(values: Sequence) -> list:
    return [v if is_variable(v) else _int_const(v) for v in values]


def concat(input: Any, axis: Any = 0, name: str | None = None) -> Any:
    """Join Variables of equal shape (except along ``axis``)."""
    helper = LayerHelper("concat", name=name)
    xs = list(input) if isinstance(input, (list, tuple)) else [input]
    check_variable("concat", "input", xs, allow_list=True)
    if not xs:
        raise ArgumentError("concat", "input must hold at least one Variable")
    from oar.layers.elementwise import check_same_dtype

    check_same_dtype("concat", {f"input[{i}]": x for i, x in enumerate(xs)})
    inputs: dict = {"X": xs}
    attrs: dict = {}
    if is_variable(axis):
        inputs["AxisTensor"] = [axis]
    elif _is_int(axis):
        attrs["axis"] = axis
    else:
        raise ArgumentTypeError("concat", f"axis must be an int or a Variable, given {axis!r}")
    out = helper.create_variable_for_type_inference(xs[0].dtype)
    helper.append_op("concat", inputs, {"Out": [out]}, attrs)
    return out


def split(input: Any, num_or_sections: Any, dim: Any = -1, name: str | None = None) -> list:
    """Cut ``input`` along ``dim`` into ``num`` equal parts or parts of the given ``sections`` sizes."""
    helper = LayerHelper("split", name=name)
    check_variable("split", "input", input)
    inputs: dict = {"X": [input]}
    attrs: dict = {}
    rank = len(input.shape)
    if is_variable(dim):
        inputs["AxisTensor"] = [dim]
        axis_known = None
    elif _is_int(dim):
        if not -rank <= dim < rank:
            raise ArgumentError("split", f"dim {dim} is out of range for input of rank {rank}")
        axis_known = dim % rank
        attrs["axis"] = axis_known  # as Fluid's layer does (Fluid 1.8.5's kernel hangs on -1)
    else:
        raise ArgumentTypeError("split", f"dim must be an int or a Variable, given {dim!r}")
    if _is_int(num_or_sections):
        if num_or_sections < 1:
            raise ArgumentError("split", f"num_or_sections must be >= 1, given {num_or_sections}")
        n = num_or_sections
        attrs["num"] = n
        if axis_known is not None and input.shape[axis_known] >= 0 and input.shape[axis_known] % n:
            raise ArgumentError(
                "split",
                f"input dim {axis_known} of size {input.shape[axis_known]} is not divisible "
                f"by num_or_sections={n}",
            )
    elif isinstance(num_or_sections, (list, tuple)):
        n = len(num_or_sections)
        if n == 0:
            raise ArgumentError("split", "num_or_sections must not be an empty list")
        if any(is_variable(s) for s in num_or_sections):
            attrs["sections"] = [-1 if is_variable(s) else int(s) for s in num_or_sections]
            inputs["SectionsTensorList"] = _tensor_list(num_or_sections)
        else:
            attrs["sections"] = _int_list("split", "num_or_sections", list(num_or_sections))
    else:
        raise ArgumentTypeError(
            "split", f"num_or_sections must be an int or a list, given {num_or_sections!r}"
        )
    outs = [helper.create_variable_for_type_inference(input.dtype) for _ in range(n)]
    helper.append_op("split", inputs, {"Out": outs}, attrs)
    return outs


def stack(x: Any, axis: int = 0) -> Any:
    """Stack equal-shaped Variables along a new dim ``axis``."""
    helper = LayerHelper("stack")
    xs = list(x) if isinstance(x, (list, tuple)) else [x]
    check_variable("stack", "x", xs, allow_list=True)
    if not xs:
        raise ArgumentError("stack", "x must hold at least one Variable")
    if not _is_int(axis):
        raise ArgumentTypeError("stack", f"axis must be an int, given {axis!r}")
    out = helper.create_variable_for_type_inference(xs[0].dtype)
    helper.append_op("stack", {"X": xs}, {"Y": [out]}, {"axis": axis})
    return out


def unstack(x: Any, axis: int = 0, num: int | None = None) -> list:
    """Split ``x`` along ``axis`` into ``x.shape[axis]`` Variables with that dim removed."""
    helper = LayerHelper("unstack")
    check_variable("unstack", "x", x)
    rank = len(x.shape)
    if not _is_int(axis) or not -rank <= axis < rank:
        raise ArgumentError("unstack", f"axis must be an int in [-{rank}, {rank}), given {axis!r}")
    if num is None:
        num = x.shape[axis]
        if num < 0:
            raise ArgumentError(
                "unstack", f"x's dim {axis % rank} is unknown ({list(x.shape)}); pass num"
            )
    outs = [helper.create_variable_for_type_inference(x.dtype) for _ in range(num)]
    helper.append_op("unstack", {"X": [x]}, {"Y": outs}, {"axis": axis, "num": num})
    return outs


def _with_xshape(
    op: str, layer: str, x: Any, attrs: dict, name: str | None, extra: dict | None = None
) -> Any:
    helper = LayerHelper(layer, name=name)
    out = helper.create_variable_for_type_inference(x.dtype)
    xshape = helper.create_variable_for_type_inference(x.dtype, stop_gradient=True)
    inputs = {"X": [x], **(extra or {})}
    helper.append_op(op, inputs, {"Out": [out], "XShape": [xshape]}, attrs)
    return out


def transpose(x: Any, perm: Sequence, name: str | None = None) -> Any:
    """Permute the dims of ``x``: dim i of the result is dim ``perm[i]`` of ``x``."""
    check_variable("transpose", "x", x)
    perm = _int_list("transpose", "perm", perm)
    if len(perm) != len(x.shape):
        raise ArgumentError(
            "transpose", f"perm {perm} must have one entry per dim of x {list(x.shape)}"
        )
    return _with_xshape("transpose2", "transpose", x, {"axis": perm}, name)


def squeeze(input: Any, axes: Any, name: str | None = None) -> Any:
    """Drop the size-1 dims listed in ``axes``."""
    check_variable("squeeze", "input", input)
    return _with_xshape(
        "squeeze2", "squeeze", input, {"axes": _int_list("squeeze", "axes", axes)}, name
    )


def unsqueeze(input: Any, axes: Any, name: str | None = None) -> Any:
    """Insert size-1 dims at ``axes`` (positions in the result)."""
    check_variable("unsqueeze", "input", input)
    if is_variable(axes):
        return _with_xshape("unsqueeze2", "unsqueeze2", input, {}, name, {"AxesTensor": [axes]})
    if isinstance(axes, (list, tuple)) and any(is_variable(a) for a in axes):
        return _with_xshape(
            "unsqueeze2", "unsqueeze2", input, {}, name, {"AxesTensorList": _tensor_list(axes)}
        )
    axes = _int_list("unsqueeze", "axes", axes)
    if not axes:
        raise ArgumentError("unsqueeze", "axes must not be empty")
    return _with_xshape("unsqueeze2", "unsqueeze2", input, {"axes": axes}, name)


def flatten(x: Any, axis: int = 1, name: str | None = None) -> Any:
    """Flatten to 2-D: dims before ``axis`` form the rows, the rest the columns."""
    check_variable("flatten", "x", x)
    if not _is_int(axis) or not 0 <= axis <= len(x.shape):
        raise ArgumentError(
            "flatten",
            f"axis must be an int in [0, {len(x.shape)}] for x of shape {list(x.shape)}, "
            f"given {axis!r}",
        )
    return _with_xshape("flatten2", "flatten", x, {"axis": axis}, name)


def expand(x: Any, expand_times: Any, name: str | None = None) -> Any:
    """Tile ``x``: dim i is repeated ``expand_times[i]`` times."""
    helper = LayerHelper("expand", name=name)
    check_variable("expand", "x", x)
    inputs: dict = {"X": [x]}
    attrs: dict = {}
    if is_variable(expand_times):
        inputs["ExpandTimes"] = [expand_times]
    elif isinstance(expand_times, (list, tuple)):
        if len(expand_times) != len(x.shape):
            raise ArgumentError(
                "expand",
                f"expand_times {list(expand_times)} must have one entry per dim of x "
                f"{list(x.shape)}",
            )
        if any(is_variable(t) for t in expand_times):
            attrs["expand_times"] = [-1 if is_variable(t) else int(t) for t in expand_times]
            inputs["expand_times_tensor"] = _tensor_list(expand_times)
        else:
            times = _int_list("expand", "expand_times", list(expand_times))
            if any(t < 1 for t in times):
                raise ArgumentError("expand", f"expand_times must be positive, given {times}")
            attrs["expand_times"] = times
    else:
        raise ArgumentTypeError(
            "expand", f"expand_times must be a list, tuple or Variable, given {expand_times!r}"
        )
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("expand", inputs, {"Out": [out]}, attrs)
    return out


def expand_as(x: Any, target_tensor: Any, name: str | None = None) -> Any:
    """Tile ``x`` to the shape of ``target_tensor`` (each dim a multiple of x's)."""
    helper = LayerHelper("expand_as", name=name)
    check_variable("expand_as", "x", x)
    check_variable("expand_as", "target_tensor", target_tensor)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("expand_as", {"X": [x], "target_tensor": [target_tensor]}, {"Out": [out]})
    return out
