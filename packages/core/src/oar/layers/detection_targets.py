"""SSD training layers (Fluid 1.8 signatures): bipartite_match, target_assign, ssd_loss and
multi_box_head (the SSD head: priors plus location/confidence convolutions per feature map)."""

from __future__ import annotations

import math
from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = [
    "bipartite_match",
    "target_assign",
    "ssd_loss",
    "multi_box_head",
    "generate_proposal_labels",
    "generate_mask_labels",
]


def bipartite_match(
    dist_matrix: Any,
    match_type: str | None = None,
    dist_threshold: float | None = None,
    name: str | None = None,
) -> tuple:
    """Match the columns (priors) of ``dist_matrix`` [ground truth, priors] (LoD per image) to
    rows: (indices [N, priors] int32, -1 unmatched; distances [N, priors])."""
    layer = "bipartite_match"
    check_variable(layer, "dist_matrix", dist_matrix)
    attrs: dict = {"match_type": match_type or "bipartite"}
    if attrs["match_type"] not in ("bipartite", "per_prediction"):
        raise ArgumentError(
            layer, f"match_type must be 'bipartite' or 'per_prediction', given {match_type!r}"
        )
    if dist_threshold is not None:
        attrs["dist_threshold"] = float(dist_threshold)
    helper = LayerHelper(layer, name=name)
    idx = helper.create_variable_for_type_inference("int32")
    dist = helper.create_variable_for_type_inference(dist_matrix.dtype)
    helper.append_op(
        layer,
        {"DistMat": [dist_matrix]},
        {"ColToRowMatchIndices": [idx], "ColToRowMatchDist": [dist]},
        attrs,
    )
    idx.stop_gradient = dist.stop_gradient = True
    return idx, dist


def target_assign(
    input: Any,
    matched_indices: Any,
    negative_indices: Any = None,
    mismatch_value: Any = None,
    name: str | None = None,
) -> tuple:
    """(out [N, P, K], weight [N, P, 1]): each prior's row of ``input`` (LoD per image) picked
    by ``matched_indices``, ``mismatch_value`` (weight 0) where unmatched; negatives weigh 1."""
    layer = "target_assign"
    check_variable(layer, "input", input)
    check_variable(layer, "matched_indices", matched_indices)
    ins = {"X": [input], "MatchIndices": [matched_indices]}
    if negative_indices is not None:
        check_variable(layer, "negative_indices", negative_indices)
        ins["NegIndices"] = [negative_indices]
    mv = 0 if mismatch_value is None else mismatch_value
    if not isinstance(mv, (int, float)) or isinstance(mv, bool) or mv != int(mv):
        raise ArgumentTypeError(layer, f"mismatch_value must be an int, given {mismatch_value!r}")
    helper = LayerHelper(layer, name=name)
    out = helper.create_variable_for_type_inference(input.dtype)
    weight = helper.create_variable_for_type_inference("float32")
    helper.append_op(layer, ins, {"Out": [out], "OutWeight": [weight]}, {"mismatch_value": int(mv)})
    out.stop_gradient = weight.stop_gradient = True
    return out, weight


def _as_targets(var: Any) -> Any:
    var.stop_gradient = True
    return var


def ssd_loss(
    location: Any,
    confidence: Any,
    gt_box: Any,
    gt_label: Any,
    prior_box: Any,
    prior_box_var: Any = None,
    background_label: int = 0,
    overlap_threshold: float = 0.5,
    neg_pos_ratio: float = 3.0,
    neg_overlap: float = 0.5,
    loc_loss_weight: float = 1.0,
    conf_loss_weight: float = 1.0,
    match_type: str = "per_prediction",
    mining_type: str = "max_negative",
    normalize: bool = True,
    sample_size: int | None = None,
) -> Any:
    """SSD's multibox loss, [N, 1]: priors matched to ground truth by IoU, hard negatives
    mined from the confidence loss (``neg_pos_ratio`` per positive), softmax cross entropy
    on the kept priors plus smooth L1 on the encoded boxes of the matched ones; divided by
    the number of matched priors when ``normalize``. ``mining_type="hard_example"`` keeps
    instead the ``sample_size`` priors of highest confidence loss (positives outside them
    are dropped); Fluid 1.8.5's layer refuses it, its op computes it."""
    from oar import layers as L

    layer = "ssd_loss"
    for arg, v in (("location", location), ("confidence", confidence), ("gt_box", gt_box),
                   ("gt_label", gt_label), ("prior_box", prior_box)):  # fmt: skip
        check_variable(layer, arg, v)
    if len(location.shape) != 3 or len(confidence.shape) != 3:
        raise ArgumentError(
            layer,
            f"location must be [N, P, 4] and confidence [N, P, C], given {list(location.shape)} "
            f"and {list(confidence.shape)}",
        )
    _check_mining(layer, mining_type, sample_size)
    n_cls = confidence.shape[2]
    known = [d for d in (location.shape[1], confidence.shape[1], prior_box.shape[0]) if d >= 0]
    if not known:
        raise ArgumentError(layer, "the number of priors must be known when the program is built")
    n_prior = known[0]
    iou = L.iou_similarity(gt_box, prior_box)
    matched, dist = bipartite_match(iou, match_type, overlap_threshold)
    labels = _as_targets(L.reshape(gt_label, [-1, 1]))
    # the confidence loss of every prior against its matched label ranks the negatives
    first_label, _ = target_assign(labels, matched, mismatch_value=background_label)
    conf2d = L.reshape(confidence, [-1, n_cls])
    rank_loss = L.softmax_with_cross_entropy(
        conf2d, _as_targets(L.cast(L.reshape(first_label, [-1, 1]), "int64"))
    )
    rank_loss = _as_targets(L.reshape(rank_loss, [-1, n_prior]))
    helper = LayerHelper(layer)
    neg = helper.create_variable_for_type_inference("int32")
    updated = helper.create_variable_for_type_inference("int32")
    helper.append_op(
        "mine_hard_examples",
        {"ClsLoss": [rank_loss], "MatchIndices": [matched], "MatchDist": [dist]},
        {"NegIndices": [neg], "UpdatedMatchIndices": [updated]},
        {"neg_pos_ratio": float(neg_pos_ratio), "neg_dist_threshold": float(neg_overlap),
         "mining_type": mining_type, "sample_size": int(sample_size or 0)},
    )  # fmt: skip
    neg.stop_gradient = updated.stop_gradient = True
    encoded = L.box_coder(prior_box, prior_box_var, gt_box, "encode_center_size")
    box_target, loc_weight = target_assign(encoded, updated, mismatch_value=background_label)
    label_target, conf_weight = target_assign(labels, updated, neg, mismatch_value=background_label)
    label_target = _as_targets(L.cast(L.reshape(label_target, [-1, 1]), "int64"))
    conf_loss = L.softmax_with_cross_entropy(conf2d, label_target) * L.reshape(conf_weight, [-1, 1])
    loc_weight = L.reshape(loc_weight, [-1, 1])
    loc_loss = (
        L.smooth_l1(L.reshape(location, [-1, 4]), L.reshape(box_target, [-1, 4])) * loc_weight
    )
    loss = conf_loss * float(conf_loss_weight) + loc_loss * float(loc_loss_weight)
    loss = L.reduce_sum(L.reshape(loss, [-1, n_prior]), dim=1, keep_dim=True)
    if normalize:
        loss = loss / L.reduce_sum(loc_weight)
    return loss


def _check_mining(layer: str, mining_type: Any, sample_size: Any) -> None:
    if mining_type not in ("max_negative", "hard_example"):
        raise ArgumentError(
            layer, f"mining_type must be 'max_negative' or 'hard_example', given {mining_type!r}"
        )
    if mining_type == "hard_example" and (
        isinstance(sample_size, bool) or not isinstance(sample_size, int) or sample_size < 1
    ):
        raise ArgumentError(
            layer,
            f"mining_type='hard_example' needs sample_size, a positive int; given {sample_size!r}",
        )


def _per_layer(layer: str, name: str, v: Any, n: int) -> list:
    if v is None:
        return [None] * n
    if not isinstance(v, (list, tuple)) or len(v) != n:
        raise ArgumentError(
            layer, f"{name} must be a list of one entry per input ({n}), given {v!r}"
        )
    return list(v)


def _ssd_sizes(layer, n, base_size, min_ratio, max_ratio, min_sizes, max_sizes) -> tuple:
    if min_sizes is not None or max_sizes is not None:
        return _per_layer(layer, "min_sizes", min_sizes, n), _per_layer(
            layer, "max_sizes", max_sizes, n
        )
    if n <= 2 or min_ratio is None or max_ratio is None:
        raise ArgumentError(
            layer,
            "give min_sizes and max_sizes, or min_ratio and max_ratio with more than 2 inputs",
        )
    step = int(math.floor((max_ratio - min_ratio) / (n - 2)))
    mins, maxs = [base_size * 0.1], [base_size * 0.2]
    for ratio in range(min_ratio, max_ratio + 1, step):
        mins.append(base_size * ratio / 100.0)
        maxs.append(base_size * (ratio + step) / 100.0)
    return mins[:n], maxs[:n]


def multi_box_head(
    inputs: Any,
    image: Any,
    base_size: int,
    num_classes: int,
    aspect_ratios: Any,
    min_ratio: Any = None,
    max_ratio: Any = None,
    min_sizes: Any = None,
    max_sizes: Any = None,
    steps: Any = None,
    step_w: Any = None,
    step_h: Any = None,
    offset: float = 0.5,
    variance: Any = [0.1, 0.1, 0.2, 0.2],  # noqa: B006 (Fluid's default)
    flip: bool = True,
    clip: bool = False,
    kernel_size: int = 1,
    pad: int = 0,
    stride: int = 1,
    name: str | None = None,
    min_max_aspect_ratios_order: bool = False,
) -> tuple:
    """The SSD head over feature maps ``inputs``: (locations [N, P, 4], confidences
    [N, P, num_classes], prior boxes [P, 4], prior variances [P, 4]), P the priors of all maps."""
    from oar import layers as L

    layer = "multi_box_head"
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ArgumentTypeError(
            layer, f"inputs must be a non-empty list of feature maps, given {inputs!r}"
        )
    n = len(inputs)
    mins, maxs = _ssd_sizes(layer, n, base_size, min_ratio, max_ratio, min_sizes, max_sizes)
    ars = _per_layer(layer, "aspect_ratios", aspect_ratios, n)
    sw, sh, st = (
        _per_layer(layer, a, v, n)
        for a, v in (("step_w", step_w), ("step_h", step_h), ("steps", steps))
    )
    locs, confs, boxes, variances = [], [], [], []
    total = 0  # the priors of all maps, when every map's size is known
    for i, feat in enumerate(inputs):
        check_variable(layer, f"inputs[{i}]", feat)
        step = [st[i], st[i]] if st[i] is not None else [sw[i] or 0.0, sh[i] or 0.0]
        box, var = L.prior_box(feat, image, mins[i], maxs[i], ars[i], variance, flip, clip, step, offset,
                               None, min_max_aspect_ratios_order)  # fmt: skip
        boxes.append(L.reshape(box, [-1, 4]))
        variances.append(L.reshape(var, [-1, 4]))
        priors = box.shape[2]
        total = (
            total + box.shape[0] * box.shape[1] * priors
            if min(box.shape[:2]) >= 0 and total >= 0
            else -1
        )
        for count, acc in ((4, locs), (num_classes, confs)):
            out = L.conv2d(feat, priors * count, kernel_size, stride, pad)
            acc.append(L.flatten(L.transpose(out, [0, 2, 3, 1]), axis=1))
    p = total if total >= 0 else -1
    mbox_loc = L.reshape(L.concat(locs, axis=1), [-1, p, 4] if p >= 0 else [0, -1, 4])
    mbox_conf = L.reshape(
        L.concat(confs, axis=1), [-1, p, num_classes] if p >= 0 else [0, -1, num_classes]
    )
    box = L.concat(boxes) if n > 1 else boxes[0]
    var = L.concat(variances) if n > 1 else variances[0]
    box.stop_gradient = var.stop_gradient = True
    return mbox_loc, mbox_conf, box, var


def generate_proposal_labels(
    rpn_rois: Any,
    gt_classes: Any,
    is_crowd: Any,
    gt_boxes: Any,
    im_info: Any,
    batch_size_per_im: int = 256,
    fg_fraction: float = 0.25,
    fg_thresh: float = 0.25,
    bg_thresh_hi: float = 0.5,
    bg_thresh_lo: float = 0.0,
    bbox_reg_weights: Any = [0.1, 0.1, 0.2, 0.2],  # noqa: B006 (Fluid's default)
    class_nums: Any = None,
    use_random: bool = True,
    is_cls_agnostic: bool = False,
    is_cascade_rcnn: bool = False,
) -> tuple:
    """Fast R-CNN training samples per image: the non-crowd ground truth and ``rpn_rois``
    (scaled back by ``im_info``) with IoU >= ``fg_thresh`` as foreground (at most
    ``batch_size_per_im * fg_fraction``), those in [``bg_thresh_lo``, ``bg_thresh_hi``) as
    background: (rois, labels int32, box targets [R, 4 * class_nums], inside and outside
    weights), LoD per image. With ``use_random=False`` the first candidates are kept.
    With ``is_cascade_rcnn`` (a later Cascade R-CNN stage) the ground truth is not added,
    empty proposals are dropped and every foreground and background candidate is kept."""
    layer = "generate_proposal_labels"
    for arg, v in (("rpn_rois", rpn_rois), ("gt_classes", gt_classes), ("is_crowd", is_crowd),
                   ("gt_boxes", gt_boxes), ("im_info", im_info)):  # fmt: skip
        check_variable(layer, arg, v)
    if not isinstance(class_nums, int) or isinstance(class_nums, bool) or class_nums <= 0:
        raise ArgumentTypeError(layer, f"class_nums must be a positive int, given {class_nums!r}")
    weights = bbox_reg_weights
    if not isinstance(weights, (list, tuple)) or len(weights) != 4:
        raise ArgumentError(layer, f"bbox_reg_weights must hold 4 numbers, given {weights!r}")
    attrs = {
        "batch_size_per_im": int(batch_size_per_im), "fg_fraction": float(fg_fraction),
        "fg_thresh": float(fg_thresh), "bg_thresh_hi": float(bg_thresh_hi), "bg_thresh_lo": float(bg_thresh_lo),
        "bbox_reg_weights": [float(w) for w in weights], "class_nums": class_nums,
        "use_random": bool(use_random), "is_cls_agnostic": bool(is_cls_agnostic), "is_cascade_rcnn": bool(is_cascade_rcnn),
    }  # fmt: skip
    helper = LayerHelper(layer)
    dt = rpn_rois.dtype
    outs = {
        "Rois": helper.create_variable_for_type_inference(dt),
        "LabelsInt32": helper.create_variable_for_type_inference("int32"),
        "BboxTargets": helper.create_variable_for_type_inference(dt),
        "BboxInsideWeights": helper.create_variable_for_type_inference(dt),
        "BboxOutsideWeights": helper.create_variable_for_type_inference(dt),
    }
    ins = {"RpnRois": [rpn_rois], "GtClasses": [gt_classes], "IsCrowd": [is_crowd], "GtBoxes": [gt_boxes],
           "ImInfo": [im_info]}  # fmt: skip
    helper.append_op(layer, ins, {k: [v] for k, v in outs.items()}, attrs)
    for v in outs.values():
        v.stop_gradient = True
    return tuple(outs.values())


def generate_mask_labels(
    im_info: Any,
    gt_classes: Any,
    is_crowd: Any,
    gt_segms: Any,
    rois: Any,
    labels_int32: Any,
    num_classes: int,
    resolution: int,
) -> tuple:
    """Mask R-CNN targets: for each foreground ROI (``labels_int32`` > 0) the polygons of its
    best-overlapping ground truth (``gt_segms``: points with LoD objects / polygons / points),
    rasterised at ``resolution`` x ``resolution`` inside the ROI, in its class's slot (others
    -1): (mask rois, their indices in the image's ROIs, masks [F, num_classes * res^2])."""
    layer = "generate_mask_labels"
    for arg, v in (("im_info", im_info), ("gt_classes", gt_classes), ("is_crowd", is_crowd),
                   ("gt_segms", gt_segms), ("rois", rois), ("labels_int32", labels_int32)):  # fmt: skip
        check_variable(layer, arg, v)
    for arg, v in (("num_classes", num_classes), ("resolution", resolution)):
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise ArgumentTypeError(layer, f"{arg} must be a positive int, given {v!r}")
    helper = LayerHelper(layer)
    outs = {"MaskRois": rois.dtype, "RoiHasMaskInt32": "int32", "MaskInt32": "int32"}
    made = {k: helper.create_variable_for_type_inference(t) for k, t in outs.items()}
    ins = {"ImInfo": [im_info], "GtClasses": [gt_classes], "IsCrowd": [is_crowd], "GtSegms": [gt_segms],
           "Rois": [rois], "LabelsInt32": [labels_int32]}  # fmt: skip
    helper.append_op(
        layer,
        ins,
        {k: [v] for k, v in made.items()},
        {"num_classes": num_classes, "resolution": resolution},
    )
    for v in made.values():
        v.stop_gradient = True
    return made["MaskRois"], made["RoiHasMaskInt32"], made["MaskInt32"]
