"""space_to_depth, temporal_shift, unfold, fsp_matrix, crop, bilinear_tensor_product layers
(Fluid 1.8 signatures and defaults)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError, ShapeError
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = [
    "space_to_depth",
    "temporal_shift",
    "unfold",
    "fsp_matrix",
    "crop",
    "bilinear_tensor_product",
]


def _append(op_type: str, ins: dict, attrs: dict, name: Any = None, out_slot: str = "Out") -> Any:
    helper = LayerHelper(op_type, name=name)
    first = next(iter(ins.values()))[0]
    out = helper.create_variable_for_type_inference(first.dtype)
    helper.append_op(op_type, ins, {out_slot: [out]}, attrs)
    return out


def _pos_int(layer: str, arg: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ArgumentError(layer, f"{arg} must be a positive int, given {v!r}")
    return v


def _ints(layer: str, arg: str, v: Any, n: int, low: int = 1) -> list:
    vals = [v] * n if isinstance(v, int) and not isinstance(v, bool) else v
    if (
        not isinstance(vals, (list, tuple))
        or len(vals) != n
        or not all(isinstance(i, int) and not isinstance(i, bool) and i >= low for i in vals)
    ):
        raise ArgumentError(layer, f"{arg} must be an int or {n} ints >= {low}, given {v!r}")
    return list(vals)


def space_to_depth(x, blocksize, name=None):
    """Move ``blocksize`` x ``blocksize`` blocks of H and W into channels (Fluid's element order)."""
    check_variable("space_to_depth", "x", x)
    b = _pos_int("space_to_depth", "blocksize", blocksize)
    return _append("space_to_depth", {"X": [x]}, {"blocksize": b}, name)


def temporal_shift(x, seg_num, shift_ratio=0.25, name=None):
    """Shift ``shift_ratio`` of the channels one frame forward and as many one frame back, over
    ``seg_num`` frames per clip (x is [N * seg_num, C, H, W])."""
    check_variable("temporal_shift", "x", x)
    seg = _pos_int("temporal_shift", "seg_num", seg_num)
    if (
        isinstance(shift_ratio, bool)
        or not isinstance(shift_ratio, (int, float))
        or not 0 <= shift_ratio <= 0.5
    ):
        raise ArgumentError(
            "temporal_shift", f"shift_ratio must be in [0, 0.5], given {shift_ratio!r}"
        )
    return _append(
        "temporal_shift", {"X": [x]}, {"seg_num": seg, "shift_ratio": float(shift_ratio)}, name
    )


def unfold(x, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """Sliding blocks of ``x`` [N, C, H, W] as columns [N, C * kh * kw, L] (im2col);
    ``paddings`` is an int, [h, w] or [top, left, bottom, right]."""
    check_variable("unfold", "x", x)
    if len(x.shape) != 4:
        raise ShapeError.in_layer("unfold", f"x must be 4-D NCHW, given {list(x.shape)}")
    if isinstance(paddings, (list, tuple)) and len(paddings) == 2:
        paddings = [paddings[0], paddings[1], paddings[0], paddings[1]]
    attrs = {
        "kernel_sizes": _ints("unfold", "kernel_sizes", kernel_sizes, 2),
        "strides": _ints("unfold", "strides", strides, 2),
        "paddings": _ints("unfold", "paddings", paddings, 4, low=0),
        "dilations": _ints("unfold", "dilations", dilations, 2),
    }
    return _append("unfold", {"X": [x]}, attrs, name, out_slot="Y")


def fsp_matrix(x, y):
    """[N, C1, C2] Gram matrices of two feature maps with the same N, H, W (divided by H * W)."""
    check_variable("fsp_matrix", "x", x)
    check_variable("fsp_matrix", "y", y)
    return _append("fsp", {"X": [x], "Y": [y]}, {})


def crop(x, shape=None, offsets=None, name=None):
    """The box of ``shape`` (a list, or a Variable whose shape is used) at ``offsets`` (a list or
    an int32 Variable; default all zeros) of ``x``."""
    check_variable("crop", "x", x)
    ins: dict = {"X": [x]}
    attrs: dict = {}
    if shape is None:
        raise ArgumentError("crop", "shape must be given (a list of ints or a Variable)")
    if is_variable(shape):
        ins["Y"] = [shape]
    elif isinstance(shape, (list, tuple)) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in shape
    ):
        attrs["shape"] = list(shape)
    else:
        raise ArgumentTypeError(
            "crop", f"shape must be a list of ints or a Variable, given {shape!r}"
        )
    if offsets is None:
        attrs["offsets"] = [0] * len(x.shape)
    elif is_variable(offsets):
        ins["Offsets"] = [offsets]
    elif isinstance(offsets, (list, tuple)) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in offsets
    ):
        attrs["offsets"] = list(offsets)
    else:
        raise ArgumentTypeError(
            "crop", f"offsets must be a list of ints or a Variable, given {offsets!r}"
        )
    return _append("crop", ins, attrs, name)


def bilinear_tensor_product(x, y, size, act=None, name=None, param_attr=None, bias_attr=None):
    """``out[n, k] = x[n] W[k] y[n]^T + b[k]`` with W [size, dx, dy], plus activation."""
    check_variable("bilinear_tensor_product", "x", x)
    check_variable("bilinear_tensor_product", "y", y)
    size = _pos_int("bilinear_tensor_product", "size", size)
    if len(x.shape) != 2 or len(y.shape) != 2 or x.shape[1] < 0 or y.shape[1] < 0:
        raise ShapeError.in_layer(
            "bilinear_tensor_product",
            f"x and y must be 2-D with known widths, given {list(x.shape)} and {list(y.shape)}",
        )
    helper = LayerHelper("bilinear_tensor_product", act=act, name=name)
    dtype = str(x.dtype)
    w = helper.create_parameter(param_attr, [size, x.shape[1], y.shape[1]], dtype)
    ins = {"X": [x], "Y": [y], "Weight": [w]}
    b = helper.create_parameter(bias_attr, [1, size], dtype, is_bias=True)
    if b is not None:
        ins["Bias"] = [b]
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op("bilinear_tensor_product", ins, {"Out": [out]}, {})
    return helper.append_activation(out, act)
