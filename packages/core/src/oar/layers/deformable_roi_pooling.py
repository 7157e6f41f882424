"""deformable_roi_pooling (Fluid 1.8 signature)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["deformable_roi_pooling"]


def _pair(name: str, v: Any) -> list:
    if (
        not isinstance(v, (list, tuple))
        or len(v) != 2
        or not all(isinstance(i, int) and i > 0 for i in v)
    ):
        raise ArgumentTypeError(
            "deformable_roi_pooling", f"{name} must be a list of 2 positive ints, given {v!r}"
        )
    return list(v)


def deformable_roi_pooling(
    input: Any,
    rois: Any,
    trans: Any,
    no_trans: bool = False,
    spatial_scale: float = 1.0,
    group_size: Any = [1, 1],  # noqa: B006 (Fluid's default)
    pooled_height: int = 1,
    pooled_width: int = 1,
    part_size: Any = None,
    sample_per_part: int = 1,
    trans_std: float = 0.1,
    position_sensitive: bool = False,
    name: str | None = None,
) -> Any:
    """Deformable (PS)ROI pooling: bin (i, j) of each ROI moves by ``trans`` [R, 2, part_h,
    part_w] (times ``trans_std`` and the ROI size) and averages ``sample_per_part``^2 bilinear
    samples. Position-sensitive: output channel k of bin (i, j) reads input channel
    (k * group_h + gi) * group_w + gj, so the output has C / (group_h * group_w) channels."""
    layer = "deformable_roi_pooling"
    for arg, v in (("input", input), ("rois", rois), ("trans", trans)):
        check_variable(layer, arg, v)
    if len(input.shape) != 4:
        raise ArgumentError(layer, f"input must be [N, C, H, W], given {list(input.shape)}")
    groups = _pair("group_size", group_size)
    for arg, v in (
        ("pooled_height", pooled_height),
        ("pooled_width", pooled_width),
        ("sample_per_part", sample_per_part),
    ):
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise ArgumentError(layer, f"{arg} must be a positive int, given {v!r}")
    parts = [pooled_height, pooled_width] if part_size is None else _pair("part_size", part_size)
    channels = input.shape[1]
    out_dim = channels // (groups[0] * groups[1]) if position_sensitive else channels
    attrs = {
        "no_trans": bool(no_trans), "spatial_scale": float(spatial_scale), "output_dim": out_dim,
        "group_size": groups, "pooled_height": pooled_height, "pooled_width": pooled_width,
        "part_size": parts, "sample_per_part": sample_per_part, "trans_std": float(trans_std),
        "position_sensitive": bool(position_sensitive),
    }  # fmt: skip
    helper = LayerHelper(layer, name=name)
    out = helper.create_variable_for_type_inference(input.dtype)
    count = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "deformable_psroi_pooling",
        {"Input": [input], "ROIs": [rois], "Trans": [trans]},
        {"Output": [out], "TopCount": [count]},
        attrs,
    )
    count.stop_gradient = True
    return out
