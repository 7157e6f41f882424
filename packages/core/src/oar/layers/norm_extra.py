"""group_norm and instance_norm layers (the dygraph GroupNorm/InstanceNorm use the same checks)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ShapeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["group_norm", "instance_norm"]


def group_norm_attrs(
    layer: str, shape: list, groups: Any, epsilon: float, data_layout: str
) -> dict:
    """The one check of ``group_norm``'s arguments against the input's shape."""
    if data_layout not in ("NCHW", "NHWC"):
        raise ArgumentError(layer, f"data_layout must be 'NCHW' or 'NHWC', given {data_layout!r}")
    if len(shape) < 2:
        raise ShapeError.in_layer(layer, f"input must have at least 2 dims, given shape {shape}")
    c = shape[-1 if data_layout == "NHWC" else 1]
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ArgumentError(layer, f"groups must be a positive int, given {groups!r}")
    if c >= 0 and groups > c:
        raise ArgumentError(
            layer,
            f"groups ({groups}) must not exceed the number of channels ({c}) of input {shape}",
        )
    return {"epsilon": float(epsilon), "groups": groups, "data_layout": data_layout}


def _affine_params(
    helper: LayerHelper, c: int, dtype: str, param_attr: Any, bias_attr: Any
) -> dict:
    from oar.initializer import Constant

    ins = {}
    scale = helper.create_parameter(param_attr, [c], dtype, default_initializer=Constant(1.0))
    if scale is not None:
        ins["Scale"] = [scale]
    bias = helper.create_parameter(bias_attr, [c], dtype, is_bias=True)
    if bias is not None:
        ins["Bias"] = [bias]
    return ins


def _channels(layer: str, input: Any, axis: int) -> int:
    c = input.shape[axis]
    if c < 0:
        raise ShapeError.in_layer(
            layer, f"the channel dim of input '{input.name}' {list(input.shape)} must be known"
        )
    return c


def group_norm(
    input,
    groups,
    epsilon=1e-05,
    param_attr=None,
    bias_attr=None,
    act=None,
    data_layout="NCHW",
    name=None,
):
    """Normalise each sample over groups of ``ceil(C / groups)`` channels (the last group is
    smaller when ``groups`` does not divide C, as in Fluid 1.8.5), then scale and shift."""
    check_variable("group_norm", "input", input)
    shape = list(input.shape)
    attrs = group_norm_attrs("group_norm", shape, groups, epsilon, data_layout)
    helper = LayerHelper("group_norm", act=act, name=name)
    c = _channels("group_norm", input, -1 if data_layout == "NHWC" else 1)
    dtype = str(input.dtype)
    ins = {"X": [input], **_affine_params(helper, c, dtype, param_attr, bias_attr)}
    mean = helper.create_variable_for_type_inference(dtype, stop_gradient=True)
    var = helper.create_variable_for_type_inference(dtype, stop_gradient=True)
    y = helper.create_variable_for_type_inference(dtype)
    helper.append_op("group_norm", ins, {"Y": [y], "Mean": [mean], "Variance": [var]}, attrs)
    return helper.append_activation(y, act)


def instance_norm(input, epsilon=1e-05, param_attr=None, bias_attr=None, name=None):
    """Normalise each channel of each sample over its spatial dims, then scale and shift."""
    check_variable("instance_norm", "input", input)
    shape = list(input.shape)
    if not 2 <= len(shape) <= 5:
        raise ShapeError.in_layer(
            "instance_norm", f"input must be 2-D to 5-D (N, C, ...), given shape {shape}"
        )
    helper = LayerHelper("instance_norm", name=name)
    c = _channels("instance_norm", input, 1)
    dtype = str(input.dtype)
    ins = {"X": [input], **_affine_params(helper, c, dtype, param_attr, bias_attr)}
    mean = helper.create_variable_for_type_inference(dtype, stop_gradient=True)
    var = helper.create_variable_for_type_inference(dtype, stop_gradient=True)
    y = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "instance_norm",
        ins,
        {"Y": [y], "SavedMean": [mean], "SavedVariance": [var]},
        {"epsilon": float(epsilon)},
    )
    return y
