"""resize_trilinear, interpolate (Fluid 1.8's dispatcher over the resize ops) and
image_resize_short."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError, ShapeError
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = ["resize_trilinear", "interpolate", "image_resize_short"]


def _size_inputs(layer: str, out_shape: Any, scale: Any, inputs: dict, attrs: dict) -> None:
    if out_shape is None and scale is None:
        raise ArgumentError(layer, "one of out_shape and scale must not be None")
    if out_shape is not None:
        if is_variable(out_shape):
            inputs["OutSize"] = [out_shape]
            return
        if not isinstance(out_shape, (list, tuple)) or len(out_shape) != 3:
            raise ArgumentError(
                layer, f"out_shape must be [d, h, w] for a 5-D input, given {out_shape!r}"
            )
        if any(is_variable(v) for v in out_shape):
            from oar.layers.tensor import fill_constant

            inputs["SizeTensor"] = [
                v if is_variable(v) else fill_constant([1], "int32", int(v)) for v in out_shape
            ]
            return
        if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in out_shape):
            raise ArgumentError(
                layer, f"out_shape must hold positive ints, given {list(out_shape)}"
            )
        attrs["out_d"], attrs["out_h"], attrs["out_w"] = (int(v) for v in out_shape)
        return
    if is_variable(scale):
        inputs["Scale"] = [scale]
    elif isinstance(scale, (int, float)) and not isinstance(scale, bool) and scale > 0:
        attrs["scale"] = float(scale)
    else:
        raise ArgumentError(
            layer, f"scale must be a positive number or a Variable, given {scale!r}"
        )


def resize_trilinear(
    input,
    out_shape=None,
    scale=None,
    name=None,
    actual_shape=None,
    align_corners=True,
    align_mode=1,
    data_format="NCDHW",
):
    """Trilinear resize of a 5-D volume to ``out_shape`` [d, h, w] or by ``scale``."""
    layer = "resize_trilinear"
    check_variable(layer, "input", input)
    if len(input.shape) != 5:
        raise ShapeError.in_layer(
            layer, f"input '{input.name}' must be 5-D, given {list(input.shape)}"
        )
    if not isinstance(align_corners, bool):
        raise ArgumentTypeError(layer, f"align_corners must be a bool, given {align_corners!r}")
    if align_mode not in (0, 1):
        raise ArgumentError(layer, f"align_mode must be 0 or 1, given {align_mode!r}")
    if data_format not in ("NCDHW", "NDHWC"):
        raise ArgumentError(layer, f"data_format must be 'NCDHW' or 'NDHWC', given {data_format!r}")
    inputs: dict = {"X": [input]}
    attrs: dict = {
        "out_d": -1,
        "out_h": -1,
        "out_w": -1,
        "scale": 0.0,
        "interp_method": "trilinear",
        "align_corners": align_corners,
        "align_mode": align_mode,
        "data_layout": data_format,
    }
    _size_inputs(layer, out_shape, scale, inputs, attrs)
    if actual_shape is not None:
        check_variable(layer, "actual_shape", actual_shape)
        inputs["OutSize"] = [actual_shape]
    helper = LayerHelper("trilinear_interp", name=name)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("trilinear_interp", inputs, {"Out": [out]}, attrs)
    return out


def interpolate(
    input,
    out_shape=None,
    scale=None,
    name=None,
    resample="BILINEAR",
    actual_shape=None,
    align_corners=True,
    align_mode=1,
    data_format="NCHW",
):
    """Resize by ``resample``: 'BILINEAR' or 'NEAREST' (4-D input) or 'TRILINEAR' (5-D)."""
    from oar.layers.interp import image_resize

    if not isinstance(resample, str) or resample.upper() not in (
        "BILINEAR",
        "NEAREST",
        "TRILINEAR",
    ):
        raise ArgumentError(
            "interpolate",
            f"resample must be 'BILINEAR', 'NEAREST' or 'TRILINEAR', given {resample!r}",
        )
    if resample.upper() == "TRILINEAR":
        if data_format not in ("NCDHW", "NDHWC"):
            raise ArgumentError(
                "interpolate",
                f"data_format must be 'NCDHW' or 'NDHWC' for TRILINEAR (a 5-D input), given "
                f"{data_format!r} (as in Fluid)",
            )
        return resize_trilinear(
            input, out_shape, scale, name, actual_shape, align_corners, align_mode, data_format
        )
    return image_resize(
        input,
        out_shape,
        scale,
        name,
        resample,
        actual_shape,
        align_corners,
        align_mode,
        data_format,
    )


def image_resize_short(input, out_short_len, resample="BILINEAR"):
    """Resize a 4-D NCHW image so its shorter side is ``out_short_len``, keeping the aspect
    ratio (the longer side rounded to the nearest int)."""
    from oar.layers.interp import image_resize

    check_variable("image_resize_short", "input", input)
    shape = list(input.shape)
    if len(shape) != 4:
        raise ShapeError.in_layer("image_resize_short", f"input must be 4-D NCHW, given {shape}")
    hw = shape[2:4]
    if min(hw) <= 0:
        raise ShapeError.in_layer(
            "image_resize_short", f"the height and width of input must be known, given {shape}"
        )
    if isinstance(out_short_len, bool) or not isinstance(out_short_len, int) or out_short_len <= 0:
        raise ArgumentError(
            "image_resize_short", f"out_short_len must be a positive int, given {out_short_len!r}"
        )
    short = hw.index(min(hw))
    out = list(hw)
    out[short] = out_short_len
    out[1 - short] = int(float(hw[1 - short]) * (float(out_short_len) / float(hw[short])) + 0.5)
    return image_resize(input, out_shape=out, resample=resample)
