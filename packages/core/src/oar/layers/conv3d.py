"""3-D convolution layers: conv3d and conv3d_transpose (Fluid 1.8 signatures and defaults).

:func:`conv3d_spec` and :func:`conv3d_transpose_spec` are the one argument check
of the layers and of ``dygraph.Conv3D`` / ``dygraph.Conv3DTranspose``.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any, NamedTuple

from oar.errors import ArgumentError, ArgumentTypeError, ShapeError
from oar.layer_helper import LayerHelper, check_variable
from oar.layers.conv import append_conv, conv_filter_std

__all__ = ["conv3d", "conv3d_transpose"]


def triple(layer: str, arg: str, value: Any, allow_zero: bool = False) -> list:
    """An int or a 3-sequence of ints -> [d, h, w]."""
    if isinstance(value, Integral) and not isinstance(value, bool):
        value = [value] * 3
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 3
        or not all(isinstance(v, Integral) and not isinstance(v, bool) for v in value)
    ):
        raise ArgumentTypeError(layer, f"{arg} must be an int or a list of 3 ints, given {value!r}")
    if any(v < (0 if allow_zero else 1) for v in value):
        raise ArgumentError(
            layer, f"{arg} must be {'>= 0' if allow_zero else 'positive'}, given {list(value)}"
        )
    return [int(v) for v in value]


def paddings3d(layer: str, padding: Any, data_format: str = "NCDHW") -> tuple:
    """Fluid's padding forms -> (``paddings`` attr, ``padding_algorithm``): an int, 3 or 6
    ints, five [before, after] pairs (batch and channel [0, 0]), or "SAME"/"VALID"."""
    if isinstance(padding, str):
        alg = padding.upper()
        if alg not in ("SAME", "VALID"):
            raise ArgumentError(
                layer, f"padding string must be 'SAME' or 'VALID', given {padding!r}"
            )
        return [0, 0, 0], alg
    if isinstance(padding, (list, tuple)) and len(padding) == 5:
        spatial = [1, 2, 3] if data_format == "NDHWC" else [2, 3, 4]
        if not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in padding) or any(
            list(padding[i]) != [0, 0] for i in range(5) if i not in spatial
        ):
            raise ArgumentError(
                layer,
                f"five padding pairs need [0, 0] for the batch and channel dims, given {padding!r}",
            )
        padding = [v for i in spatial for v in padding[i]]
    if isinstance(padding, (list, tuple)) and len(padding) == 6:
        if not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in padding):
            raise ArgumentError(layer, f"paddings must be non-negative ints, given {padding!r}")
        p = [int(v) for v in padding]
        if p[0] == p[1] and p[2] == p[3] and p[4] == p[5]:
            return [p[0], p[2], p[4]], "EXPLICIT"
        return p, "EXPLICIT"
    return triple(layer, "padding", padding, allow_zero=True), "EXPLICIT"


def volume_input(layer: str, input: Any, data_format: str) -> tuple:
    """Check a 5-D input; returns (channels, (d, h, w))."""
    check_variable(layer, "input", input)
    if data_format not in ("NCDHW", "NDHWC"):
        raise ArgumentError(layer, f"data_format must be 'NCDHW' or 'NDHWC', given {data_format!r}")
    shape = list(input.shape)
    if len(shape) != 5:
        raise ShapeError.in_layer(
            layer, f"input '{input.name}' must be 5-D ({data_format}), given shape {shape}"
        )
    c, dhw = (
        (shape[4], tuple(shape[1:4])) if data_format == "NDHWC" else (shape[1], tuple(shape[2:]))
    )
    if c < 0:
        raise ShapeError.in_layer(
            layer, f"the channel dim of input '{input.name}' {shape} must be known"
        )
    return c, dhw


class Conv3DSpec(NamedTuple):
    filter_shape: list
    attrs: dict


def _groups(layer: str, groups: Any, channels: int, num_filters: Any) -> tuple:
    if isinstance(num_filters, bool) or not isinstance(num_filters, Integral) or num_filters <= 0:
        raise ArgumentError(layer, f"num_filters must be a positive int, given {num_filters!r}")
    g = 1 if groups is None else groups
    if isinstance(g, bool) or not isinstance(g, Integral) or g <= 0:
        raise ArgumentError(layer, f"groups must be a positive int, given {groups!r}")
    if channels % g or num_filters % g:
        raise ShapeError.in_layer(
            layer,
            f"the input's {channels} channels and num_filters={num_filters} must be divisible "
            f"by groups={g}",
        )
    return int(g), int(num_filters)


def conv3d_spec(
    layer,
    channels,
    num_filters,
    filter_size,
    stride=1,
    padding=0,
    dilation=1,
    groups=None,
    use_cudnn=True,
    data_format="NCDHW",
) -> Conv3DSpec:
    g, nf = _groups(layer, groups, channels, num_filters)
    pads, alg = paddings3d(layer, padding, data_format)
    return Conv3DSpec(
        [nf, channels // g] + triple(layer, "filter_size", filter_size),
        {
            "strides": triple(layer, "stride", stride),
            "paddings": pads,
            "dilations": triple(layer, "dilation", dilation),
            "groups": g,
            "padding_algorithm": alg,
            "data_format": data_format,
            "use_cudnn": bool(use_cudnn),
        },
    )


def conv3d_transpose_spec(
    layer,
    channels,
    num_filters,
    output_size=None,
    filter_size=None,
    padding=0,
    stride=1,
    dilation=1,
    groups=None,
    use_cudnn=True,
    data_format="NCDHW",
    in_dhw=(-1, -1, -1),
) -> Conv3DSpec:
    g, nf = _groups(layer, groups, channels, num_filters)
    pads, alg = paddings3d(layer, padding, data_format)
    strides = triple(layer, "stride", stride)
    dil = triple(layer, "dilation", dilation)
    out_size = [] if output_size is None else triple(layer, "output_size", output_size)
    if filter_size is None:
        if not out_size:
            raise ArgumentError(layer, "give filter_size or output_size")
        if any(v < 0 for v in in_dhw):
            raise ShapeError.in_layer(
                layer, "deriving filter_size from output_size needs the input's size"
            )
        p6 = pads if len(pads) == 6 else [v for v in pads for _ in (0, 1)]
        k = [
            (out_size[i] - (in_dhw[i] - 1) * strides[i] + p6[2 * i] + p6[2 * i + 1] - 1) // dil[i]
            + 1
            for i in range(3)
        ]
        if any(v <= 0 for v in k):
            raise ShapeError.in_layer(
                layer, f"output_size {out_size} is smaller than the input allows"
            )
    else:
        k = triple(layer, "filter_size", filter_size)
    return Conv3DSpec(
        [channels, nf // g] + k,
        {
            "output_size": out_size,
            "strides": strides,
            "paddings": pads,
            "padding_algorithm": alg,
            "dilations": dil,
            "groups": g,
            "data_format": data_format,
            "use_cudnn": bool(use_cudnn),
        },
    )


def conv3d(
    input,
    num_filters,
    filter_size,
    stride=1,
    padding=0,
    dilation=1,
    groups=None,
    param_attr=None,
    bias_attr=None,
    use_cudnn=True,
    act=None,
    name=None,
    data_format="NCDHW",
):
    """3-D convolution of an NCDHW (or NDHWC) volume, plus bias and activation; the filter is
    ``[num_filters, C / groups, kd, kh, kw]`` from N(0, sqrt(2 / (kd * kh * kw * C)))."""
    from oar.initializer import Normal

    helper = LayerHelper("conv3d", param_attr=param_attr, bias_attr=bias_attr, act=act, name=name)
    c, _ = volume_input("conv3d", input, data_format)
    spec = conv3d_spec(
        "conv3d",
        c,
        num_filters,
        filter_size,
        stride,
        padding,
        dilation,
        groups,
        use_cudnn,
        data_format,
    )
    std = conv_filter_std(spec.filter_shape, c)
    init = Normal(0.0, std, 0)
    return append_conv(helper, "conv3d", input, spec, data_format, str(input.dtype), init)


def conv3d_transpose(
    input,
    num_filters,
    output_size=None,
    filter_size=None,
    padding=0,
    stride=1,
    dilation=1,
    groups=None,
    param_attr=None,
    bias_attr=None,
    use_cudnn=True,
    act=None,
    name=None,
    data_format="NCDHW",
):
    """Transposed 3-D convolution, plus bias and activation (``filter_size`` or ``output_size``)."""
    helper = LayerHelper(
        "conv3d_transpose", param_attr=param_attr, bias_attr=bias_attr, act=act, name=name
    )
    c, dhw = volume_input("conv3d_transpose", input, data_format)
    spec = conv3d_transpose_spec(
        "conv3d_transpose",
        c,
        num_filters,
        output_size,
        filter_size,
        padding,
        stride,
        dilation,
        groups,
        use_cudnn,
        data_format,
        dhw,
    )
    dtype = str(input.dtype)
    return append_conv(helper, "conv3d_transpose", input, spec, data_format, dtype)
