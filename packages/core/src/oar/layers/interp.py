"""Image resize layers: image_resize, resize_bilinear, resize_nearest (Fluid 1.5-1.8 signatures)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError, ShapeError
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = ["image_resize", "resize_bilinear", "resize_nearest"]

_OPS = {"BILINEAR": "bilinear_interp", "NEAREST": "nearest_interp"}


def image_resize(
    input: Any,
    out_shape: Any = None,
    scale: Any = None,
    name: str | None = None,
    resample: str = "BILINEAR",
    actual_shape: Any = None,
    align_corners: bool = True,
    align_mode: int = 1,
    data_format: str = "NCHW",
) -> Any:
    """Resize a 4-D image to ``out_shape`` [h, w] or by ``scale``, bilinearly or by nearest neighbour.

    ``out_shape`` may hold ints or 1-element int Variables, or be a Variable;
    ``scale`` may be a Variable; ``actual_shape`` (a Variable) overrides both
    at run time, as in Fluid.
    """
    if not isinstance(resample, str) or resample.upper() not in _OPS:
        raise ArgumentError(
            "image_resize",
            f"resample must be 'BILINEAR' or 'NEAREST' for a 4-D input, given {resample!r}",
        )
    op_type = _OPS[resample.upper()]
    helper = LayerHelper(op_type, name=name)
    check_variable("image_resize", "input", input)
    if len(input.shape) != 4:
        raise ShapeError.in_layer(
            "image_resize", f"input '{input.name}' must be 4-D, given shape {list(input.shape)}"
        )
    if not isinstance(align_corners, bool):
        raise ArgumentTypeError(
            "image_resize", f"align_corners must be a bool, given {type(align_corners).__name__}"
        )
    if align_mode not in (0, 1):
        raise ArgumentError("image_resize", f"align_mode must be 0 or 1, given {align_mode!r}")
    if data_format not in ("NCHW", "NHWC"):
        raise ArgumentError(
            "image_resize", f"data_format must be 'NCHW' or 'NHWC', given {data_format!r}"
        )
    if out_shape is None and scale is None:
        raise ArgumentError("image_resize", "one of out_shape and scale must not be None")
    inputs: dict = {"X": [input]}
    attrs: dict = {
        "out_d": -1,
        "out_h": -1,
        "out_w": -1,
        "scale": 0.0,
        "interp_method": op_type.split("_")[0],
        "align_corners": align_corners,
        "align_mode": align_mode,
        "data_layout": data_format,
    }
    if out_shape is not None:
        if is_variable(out_shape):
            inputs["OutSize"] = [out_shape]
        elif isinstance(out_shape, (list, tuple)):
            if len(out_shape) != 2:
                raise ArgumentError(
                    "image_resize",
                    f"out_shape must have 2 elements [h, w] for a 4-D input, given "
                    f"{list(out_shape)}",
                )
            if any(is_variable(v) for v in out_shape):
                size_tensors = []
                for v in out_shape:
                    if is_variable(v):
                        size_tensors.append(v)
                    else:
                        from oar.layers.tensor import fill_constant

                        size_tensors.append(fill_constant([1], "int32", int(v)))
                inputs["SizeTensor"] = size_tensors
            else:
                if not all(
                    isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in out_shape
                ):
                    raise ArgumentError(
                        "image_resize",
                        f"out_shape must hold positive ints, given {list(out_shape)}",
                    )
                attrs["out_h"], attrs["out_w"] = int(out_shape[0]), int(out_shape[1])
        else:
            raise ArgumentTypeError(
                "image_resize",
                f"out_shape must be a list, tuple or Variable, given {type(out_shape).__name__}",
            )
    else:
        if is_variable(scale):
            inputs["Scale"] = [scale]
        elif isinstance(scale, (int, float)) and not isinstance(scale, bool) and scale > 0:
            attrs["scale"] = float(scale)
        else:
            raise ArgumentError(
                "image_resize", f"scale must be a positive number or a Variable, given {scale!r}"
            )
    if actual_shape is not None:
        check_variable("image_resize", "actual_shape", actual_shape)
        inputs["OutSize"] = [actual_shape]
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(op_type, inputs, {"Out": [out]}, attrs)
    return out


def resize_bilinear(
    input: Any,
    out_shape: Any = None,
    scale: Any = None,
    name: str | None = None,
    actual_shape: Any = None,
    align_corners: bool = True,
    align_mode: int = 1,
    data_format: str = "NCHW",
) -> Any:
    """Bilinear resize; see :func:`image_resize`."""
    return image_resize(
        input,
        out_shape,
        scale,
        name,
        "BILINEAR",
        actual_shape,
        align_corners,
        align_mode,
        data_format,
    )


def resize_nearest(
    input: Any,
    out_shape: Any = None,
    scale: Any = None,
    name: str | None = None,
    actual_shape: Any = None,
    align_corners: bool = True,
    data_format: str = "NCHW",
) -> Any:
    """Nearest-neighbour resize; see :func:`image_resize`."""
    return image_resize(
        input, out_shape, scale, name, "NEAREST", actual_shape, align_corners, 1, data_format
    )
