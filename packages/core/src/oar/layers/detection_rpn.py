"""Region-proposal layers (Fluid 1.8 signatures): generate_proposals,
distribute_fpn_proposals, collect_fpn_proposals."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = [
    "generate_proposals",
    "distribute_fpn_proposals",
    "collect_fpn_proposals",
    "retinanet_detection_output",
    "rpn_target_assign",
    "retinanet_target_assign",
]


def _int(layer: str, name: str, v: Any) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise ArgumentTypeError(layer, f"{name} must be an int, given {v!r}")
    return v


def generate_proposals(
    scores: Any,
    bbox_deltas: Any,
    im_info: Any,
    anchors: Any,
    variances: Any,
    pre_nms_top_n: int = 6000,
    post_nms_top_n: int = 1000,
    nms_thresh: float = 0.5,
    min_size: float = 0.1,
    eta: float = 1.0,
    name: str | None = None,
    return_rois_num: bool = False,
) -> tuple:
    """RPN proposals per image: the ``pre_nms_top_n`` best anchors decoded by ``bbox_deltas``,
    clipped to the image, those under ``min_size`` dropped, NMS, at most ``post_nms_top_n``:
    (rois [R, 4], probabilities [R, 1]) with a LoD of images (and the counts per image)."""
    layer = "generate_proposals"
    for arg, v in (("scores", scores), ("bbox_deltas", bbox_deltas), ("im_info", im_info),
                   ("anchors", anchors), ("variances", variances)):  # fmt: skip
        check_variable(layer, arg, v)
    attrs = {
        "pre_nms_topN": _int(layer, "pre_nms_top_n", pre_nms_top_n),
        "post_nms_topN": _int(layer, "post_nms_top_n", post_nms_top_n),
        "nms_thresh": float(nms_thresh),
        "min_size": float(min_size),
        "eta": float(eta),
    }
    helper = LayerHelper(layer, name=name)
    rois = helper.create_variable_for_type_inference(bbox_deltas.dtype)
    probs = helper.create_variable_for_type_inference(scores.dtype)
    num = helper.create_variable_for_type_inference("int32")
    ins = {"Scores": [scores], "BboxDeltas": [bbox_deltas], "ImInfo": [im_info], "Anchors": [anchors],
           "Variances": [variances]}  # fmt: skip
    helper.append_op(
        layer, ins, {"RpnRois": [rois], "RpnRoiProbs": [probs], "RpnRoisNum": [num]}, attrs
    )
    for v in (rois, probs, num):
        v.stop_gradient = True
    return (rois, probs, num) if return_rois_num else (rois, probs)


def _levels(layer: str, min_level: Any, max_level: Any) -> int:
    lo, hi = _int(layer, "min_level", min_level), _int(layer, "max_level", max_level)
    if hi < lo:
        raise ArgumentError(layer, f"max_level ({hi}) must not be below min_level ({lo})")
    return hi - lo + 1


def distribute_fpn_proposals(
    fpn_rois: Any,
    min_level: int,
    max_level: int,
    refer_level: int,
    refer_scale: int,
    name: str | None = None,
) -> tuple:
    """Each box of ``fpn_rois`` to level floor(refer_level + log2(sqrt(area) / refer_scale))
    (clipped to [min_level, max_level]): (rois per level, RestoreIndex [R, 1], the position of
    each original box in the levels' concatenation)."""
    layer = "distribute_fpn_proposals"
    check_variable(layer, "fpn_rois", fpn_rois)
    n = _levels(layer, min_level, max_level)
    helper = LayerHelper(layer, name=name)
    multi = [helper.create_variable_for_type_inference(fpn_rois.dtype) for _ in range(n)]
    restore = helper.create_variable_for_type_inference("int32")
    attrs = {"min_level": min_level, "max_level": max_level, "refer_level": _int(layer, "refer_level", refer_level),
             "refer_scale": _int(layer, "refer_scale", refer_scale)}  # fmt: skip
    helper.append_op(
        layer, {"FpnRois": [fpn_rois]}, {"MultiFpnRois": multi, "RestoreIndex": [restore]}, attrs
    )
    return multi, restore


def collect_fpn_proposals(
    multi_rois: Any,
    multi_scores: Any,
    min_level: int,
    max_level: int,
    post_nms_top_n: int,
    name: str | None = None,
) -> Any:
    """The ``post_nms_top_n`` best-scored boxes of all levels (of the whole batch), grouped by
    image: [R, 4] with a LoD of images."""
    layer = "collect_fpn_proposals"
    n = _levels(layer, min_level, max_level)
    if not isinstance(multi_rois, (list, tuple)) or not isinstance(multi_scores, (list, tuple)):
        raise ArgumentTypeError(layer, "multi_rois and multi_scores must be lists of variables")
    if len(multi_rois) != n or len(multi_scores) != n:
        raise ArgumentError(
            layer,
            f"give one rois and one scores variable per level ({n}), given {len(multi_rois)} and {len(multi_scores)}",
        )
    for i, (r, s) in enumerate(zip(multi_rois, multi_scores)):
        check_variable(layer, f"multi_rois[{i}]", r)
        check_variable(layer, f"multi_scores[{i}]", s)
    helper = LayerHelper(layer, name=name)
    out = helper.create_variable_for_type_inference(multi_rois[0].dtype)
    attrs = {
        "min_level": min_level,
        "max_level": max_level,
        "post_nms_topN": _int(layer, "post_nms_top_n", post_nms_top_n),
    }
    helper.append_op(
        layer,
        {"MultiLevelRois": list(multi_rois), "MultiLevelScores": list(multi_scores)},
        {"FpnRois": [out]},
        attrs,
    )
    return out


def retinanet_detection_output(
    bboxes: Any,
    scores: Any,
    anchors: Any,
    im_info: Any,
    score_threshold: float = 0.05,
    nms_top_k: int = 1000,
    keep_top_k: int = 100,
    nms_threshold: float = 0.3,
    nms_eta: float = 1.0,
) -> Any:
    """RetinaNet's detections from per-level ``bboxes`` [N, M, 4] (deltas), ``scores``
    [N, M, C] (sigmoid probabilities) and ``anchors`` [M, 4]: per level the ``nms_top_k`` best
    (anchor, class) pairs above ``score_threshold``, decoded and scaled back by ``im_info``'s
    scale, per-class NMS, the ``keep_top_k`` best per image: rows [label (1-based), score, box]."""
    layer = "retinanet_detection_output"
    groups = {"bboxes": bboxes, "scores": scores, "anchors": anchors}
    for arg, vs in groups.items():
        if not isinstance(vs, (list, tuple)) or not vs:
            raise ArgumentTypeError(
                layer, f"{arg} must be a list of variables (one per level), given {vs!r}"
            )
        for i, v in enumerate(vs):
            check_variable(layer, f"{arg}[{i}]", v)
    check_variable(layer, "im_info", im_info)
    helper = LayerHelper(layer)
    out = helper.create_variable_for_type_inference(scores[0].dtype)
    attrs = {"score_threshold": float(score_threshold), "nms_top_k": _int(layer, "nms_top_k", nms_top_k),
             "keep_top_k": _int(layer, "keep_top_k", keep_top_k), "nms_threshold": float(nms_threshold),
             "nms_eta": float(nms_eta)}  # fmt: skip
    ins = {
        "BBoxes": list(bboxes),
        "Scores": list(scores),
        "Anchors": list(anchors),
        "ImInfo": [im_info],
    }
    helper.append_op(layer, ins, {"Out": [out]}, attrs)
    out.stop_gradient = True
    return out


def rpn_target_assign(
    bbox_pred: Any,
    cls_logits: Any,
    anchor_box: Any,
    anchor_var: Any,
    gt_boxes: Any,
    is_crowd: Any,
    im_info: Any,
    rpn_batch_size_per_im: int = 256,
    rpn_straddle_thresh: float = 0.0,
    rpn_fg_fraction: float = 0.5,
    rpn_positive_overlap: float = 0.7,
    rpn_negative_overlap: float = 0.3,
    use_random: bool = True,
) -> tuple:
    """RPN training targets: anchors inside the image (by ``rpn_straddle_thresh``) labelled
    foreground (IoU >= ``rpn_positive_overlap`` or the best anchor of a ground truth) or
    background (IoU < ``rpn_negative_overlap``), sampled to ``rpn_batch_size_per_im``:
    (scores of the sampled anchors, locations of the foreground ones, labels, box targets,
    inside weights). ``anchor_var`` is accepted for Fluid's signature; targets are not scaled
    by it (as in Fluid 1.8.5). With ``use_random=False`` the first candidates are kept."""
    from oar.layers.indexing import gather
    from oar.layers.reshape import reshape

    layer = "rpn_target_assign"
    for arg, v in (("bbox_pred", bbox_pred), ("cls_logits", cls_logits), ("anchor_box", anchor_box),
                   ("gt_boxes", gt_boxes), ("is_crowd", is_crowd), ("im_info", im_info)):  # fmt: skip
        check_variable(layer, arg, v)
    attrs = {"rpn_batch_size_per_im": _int(layer, "rpn_batch_size_per_im", rpn_batch_size_per_im),
             "rpn_straddle_thresh": float(rpn_straddle_thresh), "rpn_positive_overlap": float(rpn_positive_overlap),
             "rpn_negative_overlap": float(rpn_negative_overlap), "rpn_fg_fraction": float(rpn_fg_fraction),
             "use_random": bool(use_random)}  # fmt: skip
    helper = LayerHelper(layer)
    dt = anchor_box.dtype
    outs = {"LocationIndex": "int32", "ScoreIndex": "int32", "TargetBBox": dt, "TargetLabel": "int32",
            "BBoxInsideWeight": dt}  # fmt: skip
    made = {k: helper.create_variable_for_type_inference(t) for k, t in outs.items()}
    ins = {
        "Anchor": [anchor_box],
        "GtBoxes": [gt_boxes],
        "IsCrowd": [is_crowd],
        "ImInfo": [im_info],
    }
    helper.append_op(layer, ins, {k: [v] for k, v in made.items()}, attrs)
    for v in made.values():
        v.stop_gradient = True
    scores = gather(reshape(cls_logits, [-1, 1]), made["ScoreIndex"])
    locations = gather(reshape(bbox_pred, [-1, 4]), made["LocationIndex"])
    return scores, locations, made["TargetLabel"], made["TargetBBox"], made["BBoxInsideWeight"]


def retinanet_target_assign(
    bbox_pred: Any,
    cls_logits: Any,
    anchor_box: Any,
    anchor_var: Any,
    gt_boxes: Any,
    gt_labels: Any,
    is_crowd: Any,
    im_info: Any,
    num_classes: int = 1,
    positive_overlap: float = 0.5,
    negative_overlap: float = 0.4,
) -> tuple:
    """RetinaNet training targets: every anchor labelled with its ground
    truth's class (IoU >= ``positive_overlap`` or a ground truth's best anchor) or background
    (IoU < ``negative_overlap``), no sampling: (scores [F + B, num_classes], locations [F, 4],
    labels, box targets, inside weights, foreground count per image + 1)."""
    from oar.layers.indexing import gather
    from oar.layers.reshape import reshape

    layer = "retinanet_target_assign"
    for arg, v in (("bbox_pred", bbox_pred), ("cls_logits", cls_logits), ("anchor_box", anchor_box),
                   ("gt_boxes", gt_boxes), ("gt_labels", gt_labels), ("is_crowd", is_crowd),
                   ("im_info", im_info)):  # fmt: skip
        check_variable(layer, arg, v)
    num_classes = _int(layer, "num_classes", num_classes)
    helper = LayerHelper(layer)
    dt = anchor_box.dtype
    outs = {"LocationIndex": "int32", "ScoreIndex": "int32", "TargetBBox": dt, "TargetLabel": "int32",
            "BBoxInsideWeight": dt, "ForegroundNumber": "int32"}  # fmt: skip
    made = {k: helper.create_variable_for_type_inference(t) for k, t in outs.items()}
    ins = {"Anchor": [anchor_box], "GtBoxes": [gt_boxes], "GtLabels": [gt_labels], "IsCrowd": [is_crowd],
           "ImInfo": [im_info]}  # fmt: skip
    attrs = {
        "positive_overlap": float(positive_overlap),
        "negative_overlap": float(negative_overlap),
    }
    helper.append_op(layer, ins, {k: [v] for k, v in made.items()}, attrs)
    for v in made.values():
        v.stop_gradient = True
    scores = gather(reshape(cls_logits, [-1, num_classes]), made["ScoreIndex"])
    locations = gather(reshape(bbox_pred, [-1, 4]), made["LocationIndex"])
    return (scores, locations, made["TargetLabel"], made["TargetBBox"], made["BBoxInsideWeight"],
            made["ForegroundNumber"])  # fmt: skip
