"""Normalisation layers: batch_norm, layer_norm and lrn (Fluid 1.5-1.8 signatures and defaults)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ShapeError
from oar.framework.param_attr import ParamAttr
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["batch_norm", "layer_norm", "lrn"]


def batch_norm(
    input: Any,
    act: Any = None,
    is_test: bool = False,
    momentum: float = 0.9,
    epsilon: float = 1e-05,
    param_attr: Any = None,
    bias_attr: Any = None,
    data_layout: str = "NCHW",
    in_place: bool = False,
    name: str | None = None,
    moving_mean_name: str | None = None,
    moving_variance_name: str | None = None,
    do_model_average_for_mean_and_var: bool = True,
    use_global_stats: bool = False,
) -> Any:
    """Batch normalisation over the channel axis (1 for NCHW, last for NHWC).

    Creates scale (init 1), bias (init 0) and the persistable, non-trainable
    moving mean (init 0) and variance (init 1), which training runs update in
    place; ``use_global_stats`` (or ``is_test``) normalises with the moving ones.
    """
    from oar.initializer import Constant

    helper = LayerHelper(
        "batch_norm", input=input, param_attr=param_attr, bias_attr=bias_attr, act=act, name=name
    )
    check_variable("batch_norm", "input", input)
    if data_layout not in ("NCHW", "NHWC"):
        raise ArgumentError(
            "batch_norm", f"data_layout must be 'NCHW' or 'NHWC', given {data_layout!r}"
        )
    shape = list(input.shape)
    if not 2 <= len(shape) <= 5:
        raise ShapeError.in_layer(
            "batch_norm", f"input '{input.name}' must be 2-D to 5-D, given shape {shape}"
        )
    if not 0.0 <= float(momentum) <= 1.0:
        raise ArgumentError("batch_norm", f"momentum must be in [0, 1], given {momentum!r}")
    c = shape[-1] if data_layout == "NHWC" and len(shape) > 2 else shape[1]
    if c < 0:
        raise ShapeError.in_layer(
            "batch_norm", f"the channel dim of input '{input.name}' (shape {shape}) must be known"
        )
    dtype = helper.input_dtype()
    stat_dtype = "float32" if dtype == "float16" else dtype
    scale = helper.create_parameter(
        helper.kwargs.get("param_attr"), [c], stat_dtype, default_initializer=Constant(1.0)
    )
    bias = helper.create_parameter(helper.kwargs.get("bias_attr"), [c], stat_dtype, is_bias=True)
    mean = helper.create_parameter(
        ParamAttr(
            name=moving_mean_name,
            initializer=Constant(0.0),
            trainable=False,
            do_model_average=do_model_average_for_mean_and_var,
        ),
        [c],
        stat_dtype,
    )
    mean.stop_gradient = True
    variance = helper.create_parameter(
        ParamAttr(
            name=moving_variance_name,
            initializer=Constant(1.0),
            trainable=False,
            do_model_average=do_model_average_for_mean_and_var,
        ),
        [c],
        stat_dtype,
    )
    variance.stop_gradient = True
    saved_mean = helper.create_variable_for_type_inference(stat_dtype, stop_gradient=True)
    saved_var = helper.create_variable_for_type_inference(stat_dtype, stop_gradient=True)
    # ``in_place`` is accepted but not taken: the gradient needs the input, and the
    # executor frees the input after its last use anyway
    y = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "batch_norm",
        {"X": [input], "Scale": [scale], "Bias": [bias], "Mean": [mean], "Variance": [variance]},
        {
            "Y": [y],
            "MeanOut": [mean],
            "VarianceOut": [variance],
            "SavedMean": [saved_mean],
            "SavedVariance": [saved_var],
        },
        {
            "momentum": float(momentum),
            "epsilon": float(epsilon),
            "is_test": bool(is_test),
            "data_layout": data_layout,
            "use_mkldnn": False,
            "fuse_with_relu": False,
            "use_global_stats": bool(use_global_stats),
        },
    )
    return helper.append_activation(y)


def layer_norm(
    input: Any,
    scale: bool = True,
    shift: bool = True,
    begin_norm_axis: int = 1,
    epsilon: float = 1e-05,
    param_attr: Any = None,
    bias_attr: Any = None,
    act: Any = None,
    name: str | None = None,
) -> Any:
    """Normalise each row of ``input`` flattened at ``begin_norm_axis``, then scale (init 1) and shift (init 0)."""
    from oar.initializer import Constant

    helper = LayerHelper(
        "layer_norm", input=input, param_attr=param_attr, bias_attr=bias_attr, act=act, name=name
    )
    check_variable("layer_norm", "input", input)
    shape = list(input.shape)
    if not isinstance(begin_norm_axis, int) or not 0 < begin_norm_axis < len(shape):
        raise ArgumentError(
            "layer_norm",
            f"begin_norm_axis must be in [1, {len(shape) - 1}] for input "
            f"'{input.name}' of shape {shape}, given {begin_norm_axis!r}",
        )
    right = 1
    for d in shape[begin_norm_axis:]:
        if d < 0:
            raise ShapeError.in_layer(
                "layer_norm",
                f"dims from begin_norm_axis={begin_norm_axis} of input '{input.name}' "
                f"(shape {shape}) must be known",
            )
        right *= d
    dtype = helper.input_dtype()
    inputs = {"X": [input]}
    if scale:
        inputs["Scale"] = [
            helper.create_parameter(
                helper.kwargs.get("param_attr"), [right], dtype, default_initializer=Constant(1.0)
            )
        ]
    if shift:
        inputs["Bias"] = [
            helper.create_parameter(helper.kwargs.get("bias_attr"), [right], dtype, is_bias=True)
        ]
    mean = helper.create_variable_for_type_inference(dtype, stop_gradient=True)
    var = helper.create_variable_for_type_inference(dtype, stop_gradient=True)
    y = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "layer_norm",
        inputs,
        {"Y": [y], "Mean": [mean], "Variance": [var]},
        {"epsilon": float(epsilon), "begin_norm_axis": begin_norm_axis},
    )
    return helper.append_activation(y)


def lrn(
    input: Any,
    n: int = 5,
    k: float = 1.0,
    alpha: float = 1e-4,
    beta: float = 0.75,
    name: str | None = None,
    data_format: str = "NCHW",
) -> Any:
    """Local response normalisation across ``n`` neighbouring channels of a 4-D image."""
    helper = LayerHelper("lrn", name=name)
    check_variable("lrn", "input", input)
    if data_format not in ("NCHW", "NHWC"):
        raise ArgumentError("lrn", f"data_format must be 'NCHW' or 'NHWC', given {data_format!r}")
    if len(input.shape) != 4:
        raise ShapeError.in_layer(
            "lrn", f"input '{input.name}' must be 4-D, given shape {list(input.shape)}"
        )
    if not isinstance(n, int) or n <= 0 or n % 2 == 0:
        raise ArgumentError("lrn", f"n must be a positive odd int, given {n!r}")
    dtype = input.dtype
    mid = helper.create_variable_for_type_inference(dtype, stop_gradient=True)
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "lrn",
        {"X": [input]},
        {"Out": [out], "MidOut": [mid]},
        {
            "n": n,
            "k": float(k),
            "alpha": float(alpha),
            "beta": float(beta),
            "data_format": data_format,
        },
    )
    return out
