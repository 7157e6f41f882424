"""deformable_conv (Fluid 1.8 signature)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["deformable_conv"]


def _pair(layer: str, name: str, v: Any) -> list:
    vals = [v, v] if isinstance(v, int) and not isinstance(v, bool) else v
    if (
        not isinstance(vals, (list, tuple))
        or len(vals) != 2
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in vals)
    ):
        raise ArgumentTypeError(layer, f"{name} must be an int or a list of 2 ints, given {v!r}")
    return list(vals)


def deformable_conv(
    input: Any,
    offset: Any,
    mask: Any,
    num_filters: int,
    filter_size: Any,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: Any = None,
    deformable_groups: Any = None,
    im2col_step: Any = None,
    param_attr: Any = None,
    bias_attr: Any = None,
    modulated: bool = True,
    name: str | None = None,
) -> Any:
    """Deformable convolution: each kernel tap samples ``input`` [N, C, H, W] at its position
    plus ``offset`` [N, 2 * deformable_groups * kh * kw, Ho, Wo] (bilinearly), scaled by
    ``mask`` [N, deformable_groups * kh * kw, Ho, Wo] when ``modulated`` (DCNv2; v1 without)."""
    from oar.initializer import Normal
    from oar.layers.conv import conv_filter_std

    layer = "deformable_conv"
    check_variable(layer, "input", input)
    check_variable(layer, "offset", offset)
    if modulated:
        if mask is None:
            raise ArgumentError(layer, "mask is required when modulated=True (DCNv2)")
        check_variable(layer, "mask", mask)
    if len(input.shape) != 4:
        raise ArgumentError(layer, f"input must be [N, C, H, W], given {list(input.shape)}")
    groups = 1 if groups is None else groups
    channels = input.shape[1]
    if not isinstance(groups, int) or groups <= 0 or channels % groups:
        raise ArgumentError(
            layer,
            f"groups must be a positive int dividing the {channels} channels, given {groups!r}",
        )
    attrs = {
        "strides": _pair(layer, "stride", stride),
        "paddings": _pair(layer, "padding", padding),
        "dilations": _pair(layer, "dilation", dilation),
        "groups": groups,
        "deformable_groups": 1 if deformable_groups is None else deformable_groups,
        "im2col_step": 64 if im2col_step is None else im2col_step,
    }
    kh, kw = _pair(layer, "filter_size", filter_size)
    shape = [num_filters, channels // groups, kh, kw]
    helper = LayerHelper(layer, param_attr=param_attr, bias_attr=bias_attr, name=name)
    w = helper.create_parameter(
        helper.kwargs.get("param_attr"), shape, input.dtype,
        default_initializer=Normal(0.0, conv_filter_std(shape, channels), 0),
    )  # fmt: skip
    out = helper.create_variable_for_type_inference(input.dtype)
    ins = {"Input": [input], "Offset": [offset], "Filter": [w]}
    if modulated:
        ins["Mask"] = [mask]
    helper.append_op(
        "deformable_conv" if modulated else "deformable_conv_v1", ins, {"Output": [out]}, attrs
    )
    return helper.append_bias_op(out, dim_start=1, dim_end=2)
