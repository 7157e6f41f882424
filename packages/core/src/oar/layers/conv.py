"""Convolution layers: conv2d and conv2d_transpose (Fluid 1.5-1.8 signatures and defaults)."""

from __future__ import annotations

from numbers import Integral
from typing import Any, NamedTuple

from oar.errors import ArgumentError, ShapeError
from oar.layer_helper import LayerHelper
from oar.layers._conv_args import check_bool, image_input, paddings, pair, positive_int

__all__ = ["conv2d", "conv2d_transpose"]


def _groups(layer: str, groups: Any, channels: int) -> int:
    if groups is None:
        return 1
    if not isinstance(groups, Integral) or isinstance(groups, bool) or groups <= 0:
        raise ArgumentError(layer, f"groups must be a positive int, given {groups!r}")
    if channels % groups:
        raise ShapeError.in_layer(
            layer, f"the input's {channels} channels are not divisible by groups={groups}"
        )
    return int(groups)


class ConvSpec(NamedTuple):
    """What a conv layer builds: the op, its filter's shape, the op's attrs."""

    op_type: str
    filter_shape: list
    attrs: dict


def conv2d_spec(
    layer: str,
    num_channels: int,
    num_filters: int,
    filter_size: Any,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int | None = None,
    use_cudnn: bool = True,
    data_format: str = "NCHW",
) -> ConvSpec:
    """The one argument check and op choice of ``fluid.layers.conv2d`` and ``dygraph.Conv2D``.

    The op is ``depthwise_conv2d`` when ``groups`` is given and equals the channel count,
    ``num_filters`` is a multiple of it, and ``use_cudnn`` is False: Fluid 1.8.5's rule in
    both modes (checked with the oracle; ``groups=None`` never picks it).
    """
    check_bool(layer, "use_cudnn", use_cudnn)
    num_filters = positive_int(layer, "num_filters", num_filters)
    g = _groups(layer, groups, num_channels)
    if num_filters % g:
        raise ShapeError.in_layer(
            layer, f"num_filters={num_filters} is not divisible by groups={g}"
        )
    k = pair(layer, "filter_size", filter_size)
    strides = pair(layer, "stride", stride)
    dilations = pair(layer, "dilation", dilation)
    pads, alg = paddings(layer, padding, data_format)
    depthwise = (
        groups is not None
        and num_channels == g
        and num_filters % num_channels == 0
        and not use_cudnn
    )
    return ConvSpec(
        "depthwise_conv2d" if depthwise else "conv2d",
        [num_filters, num_channels // g] + k,
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


def conv2d_transpose_spec(
    layer: str,
    num_channels: int,
    num_filters: int,
    filter_size: Any = None,
    output_size: Any = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int | None = None,
    use_cudnn: bool = True,
    data_format: str = "NCHW",
    in_hw: tuple = (-1, -1),
) -> ConvSpec:
    """The one argument check and op choice of ``conv2d_transpose`` and ``dygraph.Conv2DTranspose``.

    ``depthwise_conv2d_transpose`` when ``groups`` is given and equals the channel count
    and ``num_filters``, and ``use_cudnn`` is False (Fluid 1.8.5, both modes). Without
    ``filter_size`` it is derived from ``output_size`` and the input's ``in_hw``, as in Fluid.
    """
    check_bool(layer, "use_cudnn", use_cudnn)
    num_filters = positive_int(layer, "num_filters", num_filters)
    g = _groups(layer, groups, num_channels)
    if num_filters % g:
        raise ShapeError.in_layer(
            layer, f"num_filters={num_filters} is not divisible by groups={g}"
        )
    strides = pair(layer, "stride", stride)
    dilations = pair(layer, "dilation", dilation)
    pads, alg = paddings(layer, padding, data_format)
    out_size = [] if output_size is None else pair(layer, "output_size", output_size)
    if filter_size is None:
        if not out_size:
            raise ArgumentError(layer, "give filter_size or output_size")
        h, w = in_hw
        if h < 0 or w < 0:
            raise ShapeError.in_layer(
                layer,
                "deriving filter_size from output_size needs the input's height and width",
            )
        p4 = pads if len(pads) == 4 else [pads[0], pads[0], pads[1], pads[1]]
        k = [
            (out_size[0] - (h - 1) * strides[0] + p4[0] + p4[1] - 1) // dilations[0] + 1,
            (out_size[1] - (w - 1) * strides[1] + p4[2] + p4[3] - 1) // dilations[1] + 1,
        ]
        if any(v <= 0 for v in k):
            raise ShapeError.in_layer(
                layer, f"output_size {out_size} is smaller than the input allows"
            )
    else:
        k = pair(layer, "filter_size", filter_size)
    depthwise = (
        groups is not None and num_channels == g and num_filters == num_channels and not use_cudnn
    )
    return ConvSpec(
        "depthwise_conv2d_transpose" if depthwise else "conv2d_transpose",
        [num_channels, num_filters // g] + k,
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


def conv_filter_std(filter_shape: list, num_channels: int) -> float:
    """Fluid's default conv filter init: N(0, sqrt(2 / (kernel volume * channels)))."""
    n = num_channels
    for k in filter_shape[2:]:
        n *= k
    return (2.0 / n) ** 0.5


def append_conv(
    helper: Any,
    op_type: str,
    input: Any,
    spec: Any,
    data_format: str,
    dtype: Any,
    filter_init: Any = None,
) -> Any:
    """The filter parameter (``spec.filter_shape``), the conv op with ``spec.attrs``, then bias
    (on the channel dim) and activation."""
    w = helper.create_parameter(
        helper.kwargs.get("param_attr"), spec.filter_shape, dtype, default_initializer=filter_init
    )
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(op_type, {"Input": [input], "Filter": [w]}, {"Output": [out]}, spec.attrs)
    ch = len(data_format) - 1 if data_format.endswith("C") else 1
    return helper.append_activation(helper.append_bias_op(out, dim_start=ch, dim_end=ch + 1))


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
    Fluid, from N(0, sqrt(2 / (kh * kw * channels))). Arguments and the op
    (``depthwise_conv2d`` or not) are checked and chosen by :func:`conv2d_spec`, which
    ``dygraph.Conv2D`` calls too.
    """
    from oar.initializer import Normal

    helper = LayerHelper(
        "conv2d", input=input, param_attr=param_attr, bias_attr=bias_attr, act=act, name=name
    )
    channels, _, _ = image_input("conv2d", "input", input, data_format)
    if channels < 0:
        raise ShapeError.in_layer(
            "conv2d",
            f"the channel dim of input '{input.name}' (shape {list(input.shape)}) must be "
            f"known to size the filter",
        )
    spec = conv2d_spec(
        "conv2d",
        channels,
        num_filters,
        filter_size,
        stride,
        padding,
        dilation,
        groups,
        use_cudnn,
        data_format,
    )
    std = conv_filter_std(spec.filter_shape, channels)
    dtype = helper.input_dtype()
    return append_conv(helper, spec.op_type, input, spec, data_format, dtype, Normal(0.0, std, 0))


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

    Arguments and the op (``depthwise_conv2d_transpose`` or not) are checked and chosen
    by :func:`conv2d_transpose_spec`, which ``dygraph.Conv2DTranspose`` calls too.

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
    if channels < 0:
        raise ShapeError.in_layer(
            "conv2d_transpose", f"the channel dim of input '{input.name}' must be known"
        )
    spec = conv2d_transpose_spec(
        "conv2d_transpose",
        channels,
        num_filters,
        filter_size,
        output_size,
        stride,
        padding,
        dilation,
        groups,
        use_cudnn,
        data_format,
        (h, w),
    )
    return append_conv(helper, spec.op_type, input, spec, data_format, helper.input_dtype())
