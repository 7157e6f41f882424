"""yolov3_loss (Fluid 1.8 signature)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["yolov3_loss"]


def _ints(name: str, v: Any) -> list:
    if not isinstance(v, (list, tuple)) or not all(
        isinstance(a, int) and not isinstance(a, bool) for a in v
    ):
        raise ArgumentTypeError("yolov3_loss", f"{name} must be a list of ints, given {v!r}")
    return list(v)


def yolov3_loss(
    x: Any,
    gt_box: Any,
    gt_label: Any,
    anchors: Any,
    anchor_mask: Any,
    class_num: int,
    ignore_thresh: float,
    downsample_ratio: int,
    gt_score: Any = None,
    use_label_smooth: bool = True,
    name: str | None = None,
    scale_x_y: float = 1.0,
) -> Any:
    """[N] YOLOv3 loss of head ``x`` [N, len(anchor_mask) * (5 + class_num), H, W] against
    ``gt_box`` [N, B, 4] (normalised cx, cy, w, h; all-zero rows are padding) and
    ``gt_label`` [N, B] int32, optionally weighted by ``gt_score`` [N, B] (mixup)."""
    layer = "yolov3_loss"
    for arg, v in (("x", x), ("gt_box", gt_box), ("gt_label", gt_label)):
        check_variable(layer, arg, v)
    if not isinstance(class_num, int) or isinstance(class_num, bool):
        raise ArgumentTypeError(layer, f"class_num must be an int, given {class_num!r}")
    ins = {"X": [x], "GTBox": [gt_box], "GTLabel": [gt_label]}
    if gt_score is not None:
        check_variable(layer, "gt_score", gt_score)
        ins["GTScore"] = [gt_score]
    attrs = {
        "anchors": _ints("anchors", anchors),
        "anchor_mask": _ints("anchor_mask", anchor_mask),
        "class_num": class_num,
        "ignore_thresh": float(ignore_thresh),
        "downsample_ratio": int(downsample_ratio),
        "use_label_smooth": bool(use_label_smooth),
        "scale_x_y": float(scale_x_y),
    }
    helper = LayerHelper(layer, name=name)
    loss = helper.create_variable_for_type_inference(x.dtype)
    obj = helper.create_variable_for_type_inference(x.dtype)
    match = helper.create_variable_for_type_inference("int32")
    helper.append_op(
        layer, ins, {"Loss": [loss], "ObjectnessMask": [obj], "GTMatchMask": [match]}, attrs
    )
    obj.stop_gradient = match.stop_gradient = True
    return loss
