"""ROI pooling layers (Fluid 1.8 signatures): roi_align, roi_pool, psroi_pool, prroi_pool."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["roi_align", "roi_pool", "psroi_pool", "prroi_pool", "roi_perspective_transform"]


def _pos_int(layer: str, name: str, v: Any) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise ArgumentTypeError(layer, f"{name} must be an int, given {v!r}")
    if v <= 0:
        raise ArgumentError(layer, f"{name} must be positive, given {v}")
    return v


def _scale(layer: str, v: Any) -> float:
    if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
        raise ArgumentError(layer, f"spatial_scale must be a positive number, given {v!r}")
    return float(v)


def _pool(layer, input, rois, attrs, extra=None, outs=("Out",), name=None):
    check_variable(layer, "input", input)
    check_variable(layer, "rois", rois)
    ins = {"X": [input], "ROIs": [rois]}
    for slot, v in (extra or {}).items():
        if v is not None:
            check_variable(layer, slot, v)
            ins[slot] = [v]
    helper = LayerHelper(layer, name=name)
    res = {
        o: helper.create_variable_for_type_inference("int64" if o == "Argmax" else input.dtype)
        for o in outs
    }
    helper.append_op(layer, ins, {k: [v] for k, v in res.items()}, attrs)
    if "Argmax" in res:
        res["Argmax"].stop_gradient = True
    return res["Out"]


def roi_align(
    input: Any,
    rois: Any,
    pooled_height: int = 1,
    pooled_width: int = 1,
    spatial_scale: float = 1.0,
    sampling_ratio: int = -1,
    name: str | None = None,
    rois_lod: Any = None,
) -> Any:
    """[R, C, pooled_height, pooled_width]: each bin of each ROI (LoD: ROIs per image) the mean
    of ``sampling_ratio``^2 bilinear samples (adaptive, ceil(bin size), when -1)."""
    layer = "roi_align"
    if not isinstance(sampling_ratio, int) or isinstance(sampling_ratio, bool):
        raise ArgumentTypeError(layer, f"sampling_ratio must be an int, given {sampling_ratio!r}")
    attrs = {
        "pooled_height": _pos_int(layer, "pooled_height", pooled_height),
        "pooled_width": _pos_int(layer, "pooled_width", pooled_width),
        "spatial_scale": _scale(layer, spatial_scale),
        "sampling_ratio": sampling_ratio,
    }
    return _pool(layer, input, rois, attrs, {"RoisLod": rois_lod}, name=name)


def roi_pool(
    input: Any,
    rois: Any,
    pooled_height: int = 1,
    pooled_width: int = 1,
    spatial_scale: float = 1.0,
    rois_lod: Any = None,
) -> Any:
    """[R, C, pooled_height, pooled_width]: the max of each bin of each (rounded) ROI."""
    layer = "roi_pool"
    attrs = {
        "pooled_height": _pos_int(layer, "pooled_height", pooled_height),
        "pooled_width": _pos_int(layer, "pooled_width", pooled_width),
        "spatial_scale": _scale(layer, spatial_scale),
    }
    return _pool(layer, input, rois, attrs, {"RoisLod": rois_lod}, outs=("Out", "Argmax"))


def psroi_pool(
    input: Any,
    rois: Any,
    output_channels: int,
    spatial_scale: float,
    pooled_height: int,
    pooled_width: int,
    name: str | None = None,
) -> Any:
    """Position-sensitive ROI pooling (R-FCN): bin (i, j) of output channel k averages input
    channel (k * pooled_height + i) * pooled_width + j."""
    layer = "psroi_pool"
    attrs = {
        "output_channels": _pos_int(layer, "output_channels", output_channels),
        "spatial_scale": _scale(layer, spatial_scale),
        "pooled_height": _pos_int(layer, "pooled_height", pooled_height),
        "pooled_width": _pos_int(layer, "pooled_width", pooled_width),
    }
    return _pool(layer, input, rois, attrs, name=name)


def prroi_pool(
    input: Any,
    rois: Any,
    spatial_scale: float = 1.0,
    pooled_height: int = 1,
    pooled_width: int = 1,
    batch_roi_nums: Any = None,
    name: str | None = None,
) -> Any:
    """Precise ROI pooling: each bin the exact mean of the bilinearly interpolated map."""
    layer = "prroi_pool"
    attrs = {
        "spatial_scale": _scale(layer, spatial_scale),
        "pooled_height": _pos_int(layer, "pooled_height", pooled_height),
        "pooled_width": _pos_int(layer, "pooled_width", pooled_width),
    }
    return _pool(layer, input, rois, attrs, {"BatchRoINums": batch_roi_nums}, name=name)


def roi_perspective_transform(
    input: Any,
    rois: Any,
    transformed_height: int,
    transformed_width: int,
    spatial_scale: float = 1.0,
    name: str | None = None,
) -> tuple:
    """Warp each quadrilateral ROI [R, 8] (corners clockwise from the top left; LoD per
    image) to a ``transformed_height`` x ``transformed_width`` rectangle by a perspective
    transform and bilinear sampling: (out [R, C, th, tw], mask [R, 1, th, tw] int32 of the
    pixels inside the ROI, transform matrices [R, 9])."""
    layer = "roi_perspective_transform"
    check_variable(layer, "input", input)
    check_variable(layer, "rois", rois)
    attrs = {
        "transformed_height": _pos_int(layer, "transformed_height", transformed_height),
        "transformed_width": _pos_int(layer, "transformed_width", transformed_width),
        "spatial_scale": _scale(layer, spatial_scale),
    }
    helper = LayerHelper(layer, name=name)
    out = helper.create_variable_for_type_inference(input.dtype)
    mask = helper.create_variable_for_type_inference("int32")
    matrix = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        layer,
        {"X": [input], "ROIs": [rois]},
        {"Out": [out], "Mask": [mask], "TransformMatrix": [matrix]},
        attrs,
    )
    mask.stop_gradient = matrix.stop_gradient = True
    return out, mask, matrix
