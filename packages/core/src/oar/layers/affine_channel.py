"""affine_channel (Fluid 1.8 signature)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["affine_channel"]


def affine_channel(
    x: Any,
    scale: Any = None,
    bias: Any = None,
    data_layout: str = "NCHW",
    name: str | None = None,
    act: Any = None,
) -> Any:
    """``x * scale + bias`` per channel (``scale`` and ``bias`` [C] variables), then ``act``."""
    layer = "affine_channel"
    check_variable(layer, "x", x)
    if scale is None or bias is None:
        raise ArgumentError(layer, "scale and bias are required ([C] variables)")
    check_variable(layer, "scale", scale)
    check_variable(layer, "bias", bias)
    if data_layout not in ("NCHW", "NHWC"):
        raise ArgumentError(layer, f"data_layout must be 'NCHW' or 'NHWC', given {data_layout!r}")
    helper = LayerHelper(layer, name=name)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        layer,
        {"X": [x], "Scale": [scale], "Bias": [bias]},
        {"Out": [out]},
        {"data_layout": data_layout},
    )
    return helper.append_activation(out, act)
