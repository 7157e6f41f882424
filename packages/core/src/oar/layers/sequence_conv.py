"""Sequence convolution layers (Fluid 1.8 signatures): sequence_conv and row_conv."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable

__all__ = ["sequence_conv", "row_conv"]


def _positive(layer: str, arg: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(f"{layer}: {arg} must be a positive int, given {v!r}")
    return v


def sequence_conv(
    input: Any,
    num_filters: int,
    filter_size: int = 3,
    filter_stride: int = 1,
    padding: bool = True,
    padding_start: int | None = None,
    bias_attr: Any = None,
    param_attr: Any = None,
    act: Any = None,
    name: str | None = None,
) -> Any:
    """Convolve every sequence of a [rows, width] LoDTensor with ``num_filters`` filters of
    ``filter_size`` rows; the window starts ``padding_start`` rows before each row (default
    ``-(filter_size // 2)``, centred) and sees zeros outside its sequence.

    ``padding`` is accepted for Fluid compatibility; as in Fluid it changes nothing (the
    output always has one row per input row)."""
    check_variable("sequence_conv", "input", input)
    _positive("sequence_conv", "num_filters", num_filters)
    _positive("sequence_conv", "filter_size", filter_size)
    if filter_stride != 1:
        raise ValueError(
            f"sequence_conv: filter_stride must be 1 (as in Fluid), given {filter_stride!r}"
        )
    if len(input.shape) != 2 or input.shape[1] < 0:
        raise ValueError(
            f"sequence_conv: input must be [rows, width] with a known width, given shape "
            f"{list(input.shape)}"
        )
    start = -(filter_size // 2) if padding_start is None else int(padding_start)
    helper = LayerHelper(
        "sequence_conv", param_attr=param_attr, bias_attr=bias_attr, act=act, name=name
    )
    w = helper.create_parameter(
        param_attr, [filter_size * input.shape[1], num_filters], input.dtype
    )
    pre_bias = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "sequence_conv",
        {"X": [input], "Filter": [w]},
        {"Out": [pre_bias]},
        {"contextLength": filter_size, "contextStart": start, "contextStride": 1},
    )
    return helper.append_activation(helper.append_bias_op(pre_bias))


def row_conv(input: Any, future_context_size: int, param_attr: Any = None, act: Any = None) -> Any:
    """Lookahead convolution: ``out[t] = sum_{k <= future_context_size} W[k] * x[t + k]``
    inside each sequence."""
    check_variable("row_conv", "input", input)
    if (
        isinstance(future_context_size, bool)
        or not isinstance(future_context_size, int)
        or future_context_size < 0
    ):
        raise ValueError(
            f"row_conv: future_context_size must be an int >= 0, given {future_context_size!r}"
        )
    helper = LayerHelper("row_conv", param_attr=param_attr, act=act)
    w = helper.create_parameter(param_attr, [future_context_size + 1, input.shape[-1]], input.dtype)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("row_conv", {"X": [input], "Filter": [w]}, {"Out": [out]})
    return helper.append_activation(out)
