"""Padding layers (Fluid 1.8 signatures): sequence_pad, sequence_unpad, sequence_mask."""

from __future__ import annotations

from typing import Any

from oar.framework.dtypes import convert_dtype
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = ["sequence_pad", "sequence_unpad", "sequence_mask"]


def _maxlen(layer: str, maxlen: Any) -> int:
    if maxlen is None:
        return -1
    if isinstance(maxlen, bool) or not isinstance(maxlen, int) or maxlen < 0:
        raise ValueError(f"{layer}: maxlen must be None or an int >= 0, given {maxlen!r}")
    return maxlen


def sequence_pad(x: Any, pad_value: Any, maxlen: int | None = None, name: str | None = None):
    """Pad every sequence of ``x`` to ``maxlen`` steps (default: the longest) with
    ``pad_value`` (a Variable of 1 element or of the step's shape).

    Returns ``(out, length)``: ``out`` is [num_seqs, maxlen, ...], ``length`` int64 [num_seqs].
    """
    check_variable("sequence_pad", "x", x)
    check_variable("sequence_pad", "pad_value", pad_value)
    helper = LayerHelper("sequence_pad", name=name)
    out = helper.create_variable_for_type_inference(x.dtype)
    length = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op(
        "sequence_pad",
        {"X": [x], "PadValue": [pad_value]},
        {"Out": [out], "Length": [length]},
        {"padded_length": _maxlen("sequence_pad", maxlen)},
    )
    return out, length


def sequence_unpad(x: Any, length: Any, name: str | None = None) -> Any:
    """The first ``length[i]`` steps of every row of the padded ``x``, as a LoDTensor."""
    check_variable("sequence_unpad", "x", x)
    check_variable("sequence_unpad", "length", length)
    helper = LayerHelper("sequence_unpad", name=name)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("sequence_unpad", {"X": [x], "Length": [length]}, {"Out": [out]})
    return out


def sequence_mask(x: Any, maxlen: Any = None, dtype: Any = "int64", name: str | None = None) -> Any:
    """``mask[..., j] = j < x[...]`` for ``j < maxlen`` (default: ``max(x)``); ``maxlen`` may
    be an int or a Variable."""
    check_variable("sequence_mask", "x", x)
    helper = LayerHelper("sequence_mask", name=name)
    dtype = convert_dtype(dtype)
    out = helper.create_variable_for_type_inference(dtype, stop_gradient=True)
    inputs = {"X": [x]}
    attrs: dict = {"out_dtype": dtype}
    if is_variable(maxlen):
        inputs["MaxLenTensor"] = [maxlen]
        attrs["maxlen"] = -1
    else:
        attrs["maxlen"] = _maxlen("sequence_mask", maxlen)
    helper.append_op("sequence_mask", inputs, {"Y": [out]}, attrs)
    return out
