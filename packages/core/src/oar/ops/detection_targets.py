"""Training targets of SSD-style detectors: bipartite_match (ground truth to priors),
target_assign (per-prior targets and weights) and mine_hard_examples (the negatives the
loss keeps), used by the ``ssd_loss`` layer; and Fast R-CNN's generate_proposal_labels and Mask R-CNN's generate_mask_labels.
None has a gradient.
"""

from __future__ import annotations

from oar.ops._infer import check_float
from oar.registry import Attr, OpDef, VarMeta

MATCH_TYPES = ("bipartite", "per_prediction")
MINING_TYPES = ("max_negative", "hard_example")


def _infer_match(ins, attrs):
    d = ins["DistMat"]
    check_float(ins, "DistMat")
    if len(d.shape) != 2:
        raise ValueError(
            f"DistMat must be [ground-truth boxes, priors] (LoD per image), given {list(d.shape)}"
        )
    return {
        "ColToRowMatchIndices": VarMeta((-1, d.shape[1]), "int32"),
        "ColToRowMatchDist": VarMeta((-1, d.shape[1]), d.dtype),
    }


def _infer_assign(ins, attrs):
    x, m = ins["X"], ins["MatchIndices"]
    if len(x.shape) not in (2, 3):
        raise ValueError(f"X must be [M, P, K] or [M, K] (LoD per image), given {list(x.shape)}")
    if len(m.shape) != 2:
        raise ValueError(f"MatchIndices must be [N, P], given {list(m.shape)}")
    if m.dtype != "int32":
        raise TypeError(f"MatchIndices must be int32, given {m.dtype}")
    if len(x.shape) == 3 and x.shape[1] not in (-1, 1, m.shape[1]) and m.shape[1] >= 0:
        raise ValueError(f"X's dim 1 ({x.shape[1]}) must equal MatchIndices' priors ({m.shape[1]})")
    return {
        "Out": VarMeta((m.shape[0], m.shape[1], x.shape[-1]), x.dtype),
        "OutWeight": VarMeta((m.shape[0], m.shape[1], 1), "float32"),
    }


def _infer_mine(ins, attrs):
    loss, m, d = ins["ClsLoss"], ins["MatchIndices"], ins["MatchDist"]
    for name, meta in (("ClsLoss", loss), ("MatchIndices", m), ("MatchDist", d)):
        if len(meta.shape) != 2:
            raise ValueError(f"{name} must be [N, P], given {list(meta.shape)}")
    if any(a >= 0 and b >= 0 and a != b for a, b in zip(loss.shape, m.shape)):
        raise ValueError(f"ClsLoss {list(loss.shape)} and MatchIndices {list(m.shape)} must agree")
    return {"NegIndices": VarMeta((-1, 1), "int32", 1), "UpdatedMatchIndices": m}


def _infer_labels(ins, attrs):
    for slot in ("RpnRois", "GtBoxes"):
        m = ins[slot]
        if len(m.shape) != 2 or (m.shape[1] >= 0 and m.shape[1] != 4):
            raise ValueError(f"{slot} must be [rows, 4] (LoD per image), given {list(m.shape)}")
    for slot in ("GtClasses", "IsCrowd"):
        if ins[slot].dtype != "int32":
            raise TypeError(f"{slot} must be int32, given {ins[slot].dtype}")
    width = 4 * attrs["class_nums"]
    dt = ins["RpnRois"].dtype
    return {
        "Rois": VarMeta((-1, 4), dt, 1),
        "LabelsInt32": VarMeta((-1, 1), "int32", 1),
        "BboxTargets": VarMeta((-1, width), dt, 1),
        "BboxInsideWeights": VarMeta((-1, width), dt, 1),
        "BboxOutsideWeights": VarMeta((-1, width), dt, 1),
    }


def _infer_masks(ins, attrs):
    r = ins["Rois"]
    if len(r.shape) != 2 or (r.shape[1] >= 0 and r.shape[1] != 4):
        raise ValueError(f"Rois must be [R, 4] (LoD per image), given {list(r.shape)}")
    s = ins["GtSegms"]
    if len(s.shape) != 2 or (s.shape[1] >= 0 and s.shape[1] != 2):
        raise ValueError(f"GtSegms must be [points, 2] with 3 LoD levels, given {list(s.shape)}")
    width = attrs["num_classes"] * attrs["resolution"] ** 2
    return {
        "MaskRois": VarMeta((-1, 4), r.dtype, 1),
        "RoiHasMaskInt32": VarMeta((-1, 1), "int32", 1),
        "MaskInt32": VarMeta((-1, width), "int32", 1),
    }


def register(registry) -> None:
    r = registry.register_op
    r(OpDef("bipartite_match", ["DistMat"], ["ColToRowMatchIndices", "ColToRowMatchDist"],
            {"match_type": Attr(str, "bipartite",
                                lambda v: None if v in MATCH_TYPES else f"must be one of {MATCH_TYPES}"),
             "dist_threshold": Attr(float, 0.5)},
            infer_shape=_infer_match, doc="greedy bipartite matching of rows (ground truth) to columns"))  # fmt: skip
    r(OpDef("target_assign", ["X", "MatchIndices", "NegIndices?"], ["Out", "OutWeight"],
            {"mismatch_value": Attr(int, 0)},
            infer_shape=_infer_assign, doc="per-prior targets from the matched ground truth"))  # fmt: skip
    r(OpDef("generate_proposal_labels", ["RpnRois", "GtClasses", "IsCrowd", "GtBoxes", "ImInfo"],
            ["Rois", "LabelsInt32", "BboxTargets", "BboxInsideWeights", "BboxOutsideWeights"],
            {"batch_size_per_im": Attr(int, 256, lambda v: None if v > 0 else "must be positive"),
             "fg_fraction": Attr(float, 0.25), "fg_thresh": Attr(float, 0.25),
             "bg_thresh_hi": Attr(float, 0.5), "bg_thresh_lo": Attr(float, 0.0),
             "bbox_reg_weights": Attr(list, [0.1, 0.1, 0.2, 0.2]),
             "class_nums": Attr(int, check=lambda v: None if v > 0 else "must be positive"),
             "use_random": Attr(bool, True), "is_cls_agnostic": Attr(bool, False),
             "is_cascade_rcnn": Attr(bool, False)},
            infer_shape=_infer_labels, doc="Fast R-CNN training samples and box targets per image"))  # fmt: skip
    r(OpDef("generate_mask_labels", ["ImInfo", "GtClasses", "IsCrowd", "GtSegms", "Rois", "LabelsInt32"],
            ["MaskRois", "RoiHasMaskInt32", "MaskInt32"],
            {"num_classes": Attr(int, check=lambda v: None if v > 0 else "must be positive"),
             "resolution": Attr(int, check=lambda v: None if v > 0 else "must be positive")},
            infer_shape=_infer_masks, kernel_dtype="Rois",
            doc="Mask R-CNN mask targets: each foreground ROI's polygons rasterised"))  # fmt: skip
    r(OpDef("mine_hard_examples", ["ClsLoss", "LocLoss?", "MatchIndices", "MatchDist"],
            ["NegIndices", "UpdatedMatchIndices"],
            {"neg_pos_ratio": Attr(float, 1.0), "neg_dist_threshold": Attr(float, 0.5),
             "sample_size": Attr(int, 0),
             "mining_type": Attr(str, "max_negative",
                                 lambda v: None if v in MINING_TYPES else f"must be one of {MINING_TYPES}")},
            infer_shape=_infer_mine, doc="the hardest negatives per image"))  # fmt: skip
