"""Region proposals (Faster R-CNN / FPN): generate_proposals (RPN outputs to scored boxes,
NMS per image), distribute_fpn_proposals (boxes to pyramid levels by size) and
collect_fpn_proposals (the best boxes of all levels), and RetinaNet's detection output.
No gradients."""

from __future__ import annotations

from oar.ops._infer import check_float
from oar.registry import Attr, OpDef, VarMeta


def _infer_generate(ins, attrs):
    s, d, info, anchors = ins["Scores"], ins["BboxDeltas"], ins["ImInfo"], ins["Anchors"]
    check_float(ins, "Scores")
    if len(s.shape) != 4 or len(d.shape) != 4:
        raise ValueError(
            f"Scores [N, A, H, W] and BboxDeltas [N, 4A, H, W] must be 4-D, given {list(s.shape)} and {list(d.shape)}"
        )
    if s.shape[1] >= 0 and d.shape[1] >= 0 and d.shape[1] != 4 * s.shape[1]:
        raise ValueError(
            f"BboxDeltas must have 4 channels per anchor ({4 * s.shape[1]}), given {d.shape[1]}"
        )
    if len(info.shape) != 2 or (info.shape[1] >= 0 and info.shape[1] != 3):
        raise ValueError(f"ImInfo must be [N, 3] (height, width, scale), given {list(info.shape)}")
    if anchors.shape[-1] >= 0 and anchors.shape[-1] != 4:
        raise ValueError(f"Anchors must end in 4 corners, given {list(anchors.shape)}")
    return {
        "RpnRois": VarMeta((-1, 4), s.dtype, 1),
        "RpnRoiProbs": VarMeta((-1, 1), s.dtype, 1),
        "RpnRoisNum": VarMeta((-1,), "int32"),
    }


def _levels(attrs):
    lo, hi = attrs["min_level"], attrs["max_level"]
    if hi < lo:
        raise ValueError(f"max_level ({hi}) must not be below min_level ({lo})")
    return hi - lo + 1


def _infer_distribute(ins, attrs):
    r = ins["FpnRois"]
    if len(r.shape) != 2 or (r.shape[1] >= 0 and r.shape[1] != 4):
        raise ValueError(f"FpnRois must be [R, 4] (LoD per image), given {list(r.shape)}")
    n = _levels(attrs)
    return {
        "MultiFpnRois": [VarMeta((-1, 4), r.dtype, 1) for _ in range(n)],
        "RestoreIndex": VarMeta((-1, 1), "int32"),
    }


def _infer_collect(ins, attrs):
    rois, scores = ins["MultiLevelRois"], ins["MultiLevelScores"]
    n = _levels(attrs)
    if len(rois) != n or len(scores) != n:
        raise ValueError(
            f"give one rois and one scores variable per level {attrs['min_level']}..{attrs['max_level']} "
            f"({n}), given {len(rois)} and {len(scores)}"
        )
    return {"FpnRois": VarMeta((-1, 4), rois[0].dtype, 1)}


def _infer_retina(ins, attrs):
    b, s, a = ins["BBoxes"], ins["Scores"], ins["Anchors"]
    if not (len(b) == len(s) == len(a)) or not b:
        raise ValueError(
            f"give one BBoxes, Scores and Anchors per level, given {len(b)}, {len(s)} and {len(a)}"
        )
    for k, (bb, ss, aa) in enumerate(zip(b, s, a)):
        if len(bb.shape) != 3 or len(ss.shape) != 3 or bb.shape[-1] != 4:
            raise ValueError(
                f"level {k}: BBoxes must be [N, M, 4] and Scores [N, M, C], given {list(bb.shape)} and {list(ss.shape)}"
            )
        m = bb.shape[1]
        if m >= 0 and ss.shape[1] >= 0 and m != ss.shape[1]:
            raise ValueError(f"level {k}: BBoxes has {m} anchors, Scores {ss.shape[1]}")
        if len(aa.shape) != 2 or aa.shape[-1] != 4:
            raise ValueError(f"level {k}: Anchors must be [M, 4], given {list(aa.shape)}")
    return {"Out": VarMeta((-1, 6), b[0].dtype, 1)}


def _infer_rpn_target(ins, attrs):
    a, g = ins["Anchor"], ins["GtBoxes"]
    if len(a.shape) != 2 or (a.shape[1] >= 0 and a.shape[1] != 4):
        raise ValueError(f"Anchor must be [M, 4], given {list(a.shape)}")
    if len(g.shape) != 2 or (g.shape[1] >= 0 and g.shape[1] != 4):
        raise ValueError(f"GtBoxes must be [G, 4] (LoD per image), given {list(g.shape)}")
    if ins["IsCrowd"].dtype != "int32":
        raise TypeError(f"IsCrowd must be int32, given {ins['IsCrowd'].dtype}")
    return {
        "LocationIndex": VarMeta((-1,), "int32", 1),
        "ScoreIndex": VarMeta((-1,), "int32", 1),
        "TargetBBox": VarMeta((-1, 4), a.dtype, 1),
        "TargetLabel": VarMeta((-1, 1), "int32", 1),
        "BBoxInsideWeight": VarMeta((-1, 4), a.dtype, 1),
    }


def _positive(v):
    return None if v > 0 else "must be positive"


def register(registry) -> None:
    r = registry.register_op
    r(OpDef("generate_proposals", ["Scores", "BboxDeltas", "ImInfo", "Anchors", "Variances"],
            ["RpnRois", "RpnRoiProbs", "RpnRoisNum?"],
            {"pre_nms_topN": Attr(int, 6000), "post_nms_topN": Attr(int, 1000),
             "nms_thresh": Attr(float, 0.5), "min_size": Attr(float, 0.1),
             "eta": Attr(float, 1.0, lambda v: None if 0 < v <= 1 else "must be in (0, 1]")},
            infer_shape=_infer_generate, doc="RPN proposals: decode, clip, filter, NMS per image"))  # fmt: skip
    r(OpDef("rpn_target_assign", ["Anchor", "GtBoxes", "IsCrowd", "ImInfo"],
            ["LocationIndex", "ScoreIndex", "TargetBBox", "TargetLabel", "BBoxInsideWeight"],
            {"rpn_batch_size_per_im": Attr(int, 256, _positive), "rpn_straddle_thresh": Attr(float, 0.0),
             "rpn_positive_overlap": Attr(float, 0.7), "rpn_negative_overlap": Attr(float, 0.3),
             "rpn_fg_fraction": Attr(float, 0.25), "use_random": Attr(bool, True)},
            infer_shape=_infer_rpn_target, kernel_dtype="Anchor",
            doc="RPN training targets: anchors labelled by IoU with the ground truth, sampled"))  # fmt: skip
    r(OpDef("retinanet_target_assign", ["Anchor", "GtBoxes", "GtLabels", "IsCrowd", "ImInfo"],
            ["LocationIndex", "ScoreIndex", "TargetBBox", "TargetLabel", "BBoxInsideWeight", "ForegroundNumber"],
            {"positive_overlap": Attr(float, 0.5), "negative_overlap": Attr(float, 0.4)},
            infer_shape=lambda i, a: {**_infer_rpn_target(i, a), "ForegroundNumber": VarMeta((-1, 1), "int32")},
            kernel_dtype="Anchor", doc="RetinaNet training targets: every anchor labelled by IoU"))  # fmt: skip
    r(OpDef("retinanet_detection_output", ["BBoxes*", "Scores*", "Anchors*", "ImInfo"], ["Out"],
            {"score_threshold": Attr(float, 0.05), "nms_top_k": Attr(int, 1000), "keep_top_k": Attr(int, 100),
             "nms_threshold": Attr(float, 0.3), "nms_eta": Attr(float, 1.0, lambda v: None if 0 < v <= 1 else "must be in (0, 1]")},
            infer_shape=_infer_retina, kernel_dtype="ImInfo",
            doc="RetinaNet detections: best pairs per level decoded, per-class NMS"))  # fmt: skip
    r(OpDef("distribute_fpn_proposals", ["FpnRois"], ["MultiFpnRois*", "RestoreIndex"],
            {"min_level": Attr(int), "max_level": Attr(int), "refer_level": Attr(int),
             "refer_scale": Attr(int, check=_positive)},
            infer_shape=_infer_distribute, doc="proposals to FPN levels by their size"))  # fmt: skip
    r(OpDef("collect_fpn_proposals", ["MultiLevelRois*", "MultiLevelScores*"], ["FpnRois"],
            {"min_level": Attr(int), "max_level": Attr(int), "post_nms_topN": Attr(int, 100, _positive)},
            infer_shape=_infer_collect, doc="the best proposals of all FPN levels"))  # fmt: skip
