"""im2sequence (Fluid 1.8 signature)."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable

__all__ = ["im2sequence"]


def _ints(name: str, v: Any, n: int) -> list:
    vals = [v] * n if isinstance(v, int) and not isinstance(v, bool) else v
    if not isinstance(vals, (list, tuple)) or len(vals) not in (n, 2 if n == 4 else n):
        raise ValueError(f"im2sequence: {name} must be an int or a list of {n} ints, given {v!r}")
    vals = list(vals)
    if n == 4 and len(vals) == 2:
        vals = vals + vals  # [up, left] -> [up, left, down, right]
    if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in vals):
        raise ValueError(f"im2sequence: {name} must hold non-negative ints, given {v!r}")
    return vals


def im2sequence(
    input: Any,
    filter_size: Any = 1,
    stride: Any = 1,
    padding: Any = 0,
    input_image_size: Any = None,
    out_stride: Any = 1,
    name: str | None = None,
) -> Any:
    """Each image of ``input`` [N, C, H, W] as a sequence of its ``filter_size`` patches
    (rows of C * kh * kw); ``padding`` is [up, left, down, right]. With
    ``input_image_size`` ([N, 2] real heights and widths) each image yields only the patches
    of its real size divided by ``out_stride``."""
    check_variable("im2sequence", "input", input)
    if len(input.shape) != 4:
        raise ValueError(f"im2sequence: input must be [N, C, H, W], given {list(input.shape)}")
    attrs = {
        "kernels": _ints("filter_size", filter_size, 2),
        "strides": _ints("stride", stride, 2),
        "paddings": _ints("padding", padding, 4),
        "out_stride": _ints("out_stride", out_stride, 2),
    }
    if 0 in attrs["kernels"] or 0 in attrs["strides"] or 0 in attrs["out_stride"]:
        raise ValueError("im2sequence: filter_size, stride and out_stride must be positive")
    ins = {"X": [input]}
    if input_image_size is not None:
        check_variable("im2sequence", "input_image_size", input_image_size)
        ins["Y"] = [input_image_size]
    helper = LayerHelper("im2sequence", name=name)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("im2sequence", ins, {"Out": [out]}, attrs)
    return out
