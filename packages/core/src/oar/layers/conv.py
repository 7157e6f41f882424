"""Convolution layers: conv2d and conv2d_transpose (Fluid 1.5-1.8 signatures and defaults)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ShapeError
from oar.layer_helper import LayerHelper
from oar.layers._conv_args import check_bool, image_input, paddings, pair

__all__ = ["conv2d", "conv2d_transpose"]


def _groups(layer: str, groups: Any, channels: int) -> int:
    if groups is None:
        return 1
    if not isinstance(groups, int) or isinstance(groups, bool) or groups <= 0:
        raise ArgumentError(layer, f"groups must be a positive int, given {groups!r}")
    if channels % groups:
        raise ShapeError.in_layer(
            layer, f"the input's {channels} channels are not divisible by groups={groups}"
        )
    return groups


def conv2d(
    input: Any,
    num_filters: int,
    filter_size: Any,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int | None = None,
    param_attr: Any = None,
    bias_attr: Any = None,
    use_cudnn: bool = True,
    act: Any = None,
    name: str | None = None,
    data_format: str = "NCHW",
) -> Any:
    """2-D convolution of an NCHW (or NHWC) image, plus bias and activation.

    The filter is ``[num_filters, channels / groups, kh, kw]`` initialised, as in
    Fluid, from N(0, sqrt(2 / (kh * kw * channels))). With ``use_cudnn=False``
    and one group per channel the op is ``depthwise_conv2d``, as in Fluid.
    """
    from oar.initializer import Normal

    helper = LayerHelper(
        "conv2d", input=input, param_attr=param_attr, bias_attr=bias_attr, act=act, name=name
    )
    channels, _, _ = image_input("conv2d", "input", input, data_format)
    check_bool("conv2d", "use_cudnn", use_cudnn)
    if channels < 0:
        raise ShapeError.in_layer(
            "conv2d",
            f"the channel dim of input '{input.name}' (shape {list(input.shape)}) must be "
            f"known to size the filter",
        )
    if not isinstance(num_filters, int) or isinstance(num_filters, bool) or num_filters <= 0:
        raise ArgumentError("conv2d", f"num_filters must be a positive int, given {num_filters!r}")
    g = _groups("conv2d", groups, channels)
    if num_filters % g:
        raise ShapeError.in_layer(
            "conv2d", f"num_filters={num_filters} is not divisible by groups={g}"
        )
    k = pair("conv2d", "filter_size", filter_size)
    strides = pair("conv2d", "stride", stride)
    dilations = pair("conv2d", "dilation", dilation)
    pads, alg = paddings("conv2d", padding, data_format)
    op_type = "conv2d"
    if channels == g and num_filters % channels == 0 and not use_cudnn:
        op_type = "depthwise_conv2d"
    dtype = helper.input_dtype()
    std = (2.0 / (k[0] * k[1] * channels)) ** 0.5
    w = helper.create_parameter(
        helper.kwargs.get("param_attr"),
        [num_filters, channels // g] + k,
        dtype,
        default_initializer=Normal(0.0, std, 0),
    )
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        op_type,
        {"Input": [input], "Filter": [w]},
        {"Output": [out]},
        {
            "strides": strides,
            "paddings": pads,
            "dilations": dilations,
            "groups": g,
            "use_cudnn": use_cudnn,
            "use_mkldnn": False,
            "padding_algorithm": alg,
            "data_format": data_format,
        },
    )
    channel_dim = 3 if data_format == "NHWC" else 1
    pre_act = helper.append_bias_op(out, dim_start=channel_dim, dim_end=channel_dim + 1)
    return helper.append_activation(pre_act)


def conv2d_transpose(
    input: Any,
    num_filters: int,
    output_size: Any = None,
    filter_size: Any = None,
    padding: Any = 0,
    stride: Any = 1,
    dilation: Any = 1,
    groups: int | None = None,
    param_attr: Any = None,
    bias_attr: Any = None,
    use_cudnn: bool = True,
    act: Any = None,
    name: str | None = None,
    data_format: str = "NCHW",
) -> Any:
    """Transposed 2-D convolution ("deconvolution"), plus bias and activation.

    With ``use_cudnn=False`` and one group per channel (as many filters as
    channels) the op is ``depthwise_conv2d_transpose``, as in Fluid.

    Give ``filter_size``, or ``output_size`` alone and the filter size is derived
    from it as in Fluid; with both, ``output_size`` picks among the sizes the
    stride allows.
    """
    helper = LayerHelper(
        "conv2d_transpose",
        input=input,
        param_attr=param_attr,
        bias_attr=bias_attr,
        act=act,
        name=name,
    )
    channels, h, w = image_input("conv2d_transpose", "input", input, data_format)
    check_bool("conv2d_transpose", "use_cudnn", use_cudnn)
    if channels < 0:
        raise ShapeError.in_layer(
            "conv2d_transpose", f"the channel dim of input '{input.name}' must be known"
        )
    if not isinstance(num_filters, int) or isinstance(num_filters, bool) or num_filters <= 0:
        raise ArgumentError(
            "conv2d_transpose", f"num_filters must be a positive int, given {num_filters!r}"
        )
    g = _groups("conv2d_transpose", groups, channels)
    if num_filters % g:
        raise ShapeError.in_layer(
            "conv2d_transpose", f"num_filters={num_filters} is not divisible by groups={g}"
        )
    strides = pair("conv2d_transpose", "stride", stride)
    dilations = pair("conv2d_transpose", "dilation", dilation)
    pads, alg = paddings("conv2d_transpose", padding, data_format)
    out_size = [] if output_size is None else pair("conv2d_transpose", "output_size", output_size)
    if filter_size is None:
        if not out_size:
            raise ArgumentError("conv2d_transpose", "give filter_size or output_size")
        if h < 0 or w < 0:
            raise ShapeError.in_layer(
                "conv2d_transpose",
                "deriving filter_size from output_size needs the input's height and width",
            )
        p4 = pads if len(pads) == 4 else [pads[0], pads[0], pads[1], pads[1]]
        k = [
            (out_size[0] - (h - 1) * strides[0] + p4[0] + p4[1] - 1) // dilations[0] + 1,
            (out_size[1] - (w - 1) * strides[1] + p4[2] + p4[3] - 1) // dilations[1] + 1,
        ]
        if any(v <= 0 for v in k):
            raise ShapeError.in_layer(
                "conv2d_transpose", f"output_size {out_size} is smaller than the input allows"
            )
    else:
        k = pair("conv2d_transpose", "filter_size", filter_size)
    dtype = helper.input_dtype()
    wgt = helper.create_parameter(
        helper.kwargs.get("param_attr"), [channels, num_filters // g] + k, dtype
    )
    out = helper.create_variable_for_type_inference(dtype)
    op_type = "conv2d_transpose"
    if channels == g and num_filters == channels and not use_cudnn:
        op_type = "depthwise_conv2d_transpose"
    helper.append_op(
        op_type,
        {"Input": [input], "Filter": [wgt]},
        {"Output": [out]},
        {
            "output_size": out_size,
            "strides": strides,
            "paddings": pads,
            "padding_algorithm": alg,
            "dilations": dilations,
            "groups": g,
            "use_cudnn": use_cudnn,
            "data_format": data_format,
        },
    )
    channel_dim = 3 if data_format == "NHWC" else 1
    pre_act = helper.append_bias_op(out, dim_start=channel_dim, dim_end=channel_dim + 1)
    return helper.append_activation(pre_act)
