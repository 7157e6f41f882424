"""Kernels of the region-proposal ops (numpy only: per-image selection and NMS)."""

from __future__ import annotations

import math

import numpy as np
from oar.api import LoDTensor
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import FLOATS, kernel
from oar_kernels_cpu.kernels._sequence import array_of, with_lod
from oar_kernels_cpu.kernels.detection_nms import greedy_nms

_CLIP = math.log(1000.0 / 16.0)  # the largest width/height delta applied


def decode_pixels(anchors, var, deltas):
    """Pixel boxes from anchors and deltas (widths count both end pixels)."""
    aw = anchors[:, 2] - anchors[:, 0] + 1
    ah = anchors[:, 3] - anchors[:, 1] + 1
    cx = var[:, 0] * deltas[:, 0] * aw + anchors[:, 0] + 0.5 * aw
    cy = var[:, 1] * deltas[:, 1] * ah + anchors[:, 1] + 0.5 * ah
    w = np.exp(np.minimum(var[:, 2] * deltas[:, 2], _CLIP)) * aw
    h = np.exp(np.minimum(var[:, 3] * deltas[:, 3], _CLIP)) * ah
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2 - 1, cy + h / 2 - 1], axis=1)


def _proposals(scores, deltas, info, anchors, var, attrs) -> tuple:
    order = np.argsort(-scores, kind="stable")
    if attrs["pre_nms_topN"] > 0:
        order = order[: attrs["pre_nms_topN"]]
    boxes = decode_pixels(anchors[order], var[order], deltas[order])
    im_h, im_w, scale = (float(v) for v in info)
    boxes[:, 0::2] = np.clip(boxes[:, 0::2], 0, im_w - 1)
    boxes[:, 1::2] = np.clip(boxes[:, 1::2], 0, im_h - 1)
    ws, hs = boxes[:, 2] - boxes[:, 0] + 1, boxes[:, 3] - boxes[:, 1] + 1
    min_size = max(attrs["min_size"], 1.0)
    keep = (
        ((boxes[:, 2] - boxes[:, 0]) / scale + 1 >= min_size)
        & ((boxes[:, 3] - boxes[:, 1]) / scale + 1 >= min_size)
        & (boxes[:, 0] + ws / 2 <= im_w)
        & (boxes[:, 1] + hs / 2 <= im_h)
    )
    boxes, probs = boxes[keep], scores[order][keep]
    nms = {"score_threshold": -np.inf, "nms_top_k": -1, "nms_threshold": attrs["nms_thresh"],
           "nms_eta": attrs["eta"], "normalized": False}  # fmt: skip
    kept = greedy_nms(boxes, probs, nms)
    if attrs["post_nms_topN"] > 0:
        kept = kept[: attrs["post_nms_topN"]]
    return boxes[kept], probs[kept]


@kernel("generate_proposals", FLOATS, lod=True, generic=False)
def generate_proposals(inputs, attrs):
    scores, deltas, info = inputs["Scores"], inputs["BboxDeltas"], inputs["ImInfo"]
    n, a, h, w = scores.shape
    anchors = inputs["Anchors"].reshape(-1, 4).astype(np.float64)
    var = inputs["Variances"].reshape(-1, 4).astype(np.float64)
    if len(anchors) != a * h * w:
        raise ShapeError(f"generate_proposals: {len(anchors)} anchors for {a} x {h} x {w} scores")
    rois, probs, offsets = [], [], [0]
    for i in range(n):
        s = scores[i].transpose(1, 2, 0).reshape(-1)
        d = deltas[i].reshape(a, 4, h, w).transpose(2, 3, 0, 1).reshape(-1, 4)
        b, p = _proposals(s, d, info[i], anchors, var, attrs)
        rois.append(b)
        probs.append(p)
        offsets.append(offsets[-1] + len(b))
    dt = scores.dtype
    return {
        "RpnRois": with_lod(np.concatenate(rois).astype(dt).reshape(-1, 4), [offsets]),
        "RpnRoiProbs": with_lod(np.concatenate(probs).astype(dt).reshape(-1, 1), [offsets]),
        "RpnRoisNum": np.diff(offsets).astype(np.int32),
    }


def _image_offsets(t, rows: int) -> list:
    if isinstance(t, LoDTensor) and t.lod():
        return [int(o) for o in t.lod()[-1]]
    return [0, rows]


def fpn_levels(rois, attrs):
    """The pyramid level of each box: refer_level + log2(sqrt(area) / refer_scale), clipped."""
    scale = np.sqrt((rois[:, 2] - rois[:, 0] + 1) * (rois[:, 3] - rois[:, 1] + 1))
    level = np.floor(attrs["refer_level"] + np.log2(scale / attrs["refer_scale"] + 1e-6))
    return np.clip(level, attrs["min_level"], attrs["max_level"]).astype(np.int64)


@kernel("distribute_fpn_proposals", FLOATS, lod=True, generic=False)
def distribute_fpn_proposals(inputs, attrs):
    t = inputs["FpnRois"]
    rois = array_of(t)
    off = _image_offsets(t, rows=len(rois))
    level = fpn_levels(rois, attrs)
    image = np.repeat(np.arange(len(off) - 1), np.diff(off))
    outs, order = [], []
    for lv in range(attrs["min_level"], attrs["max_level"] + 1):
        sel = np.flatnonzero(level == lv)  # image-major already: rows are grouped by image
        counts = np.bincount(image[sel], minlength=len(off) - 1)
        outs.append(
            with_lod(rois[sel].reshape(-1, 4), [np.concatenate([[0], np.cumsum(counts)]).tolist()])
        )
        order.append(sel)
    restore = np.empty(len(rois), dtype=np.int32)
    restore[np.concatenate(order).astype(np.int64)] = np.arange(len(rois), dtype=np.int32)
    return {"MultiFpnRois": outs, "RestoreIndex": restore.reshape(-1, 1)}


@kernel("collect_fpn_proposals", FLOATS, lod=True, generic=False)
def collect_fpn_proposals(inputs, attrs):
    rois, scores, images = [], [], []
    for r_t, s_t in zip(inputs["MultiLevelRois"], inputs["MultiLevelScores"]):
        r, s = array_of(r_t), array_of(s_t).reshape(-1)
        off = _image_offsets(r_t, len(r))
        rois.append(r.reshape(-1, 4))
        scores.append(s)
        images.append(np.repeat(np.arange(len(off) - 1), np.diff(off)))
    n_img = max((len(_image_offsets(t, 0)) - 1 for t in inputs["MultiLevelRois"]), default=1)
    r, s, img = np.concatenate(rois), np.concatenate(scores), np.concatenate(images)
    top = np.argsort(-s, kind="stable")[: attrs["post_nms_topN"]]
    top = top[np.argsort(img[top], kind="stable")]  # grouped by image, best first within one
    counts = np.bincount(img[top], minlength=n_img)
    return {"FpnRois": with_lod(r[top], [np.concatenate([[0], np.cumsum(counts)]).tolist()])}


def _retina_image(i, inputs, attrs) -> list:
    """(label, score, box) kept for image ``i``: best-scored (anchor, class) pairs per level,
    decoded, scaled back to the original image, clipped; then per-class NMS."""
    info = inputs["ImInfo"][i].astype(np.float64)
    im_h, im_w = round(info[0] / info[2]), round(info[1] / info[2])
    boxes, scores, labels = [], [], []
    for deltas, sc, anchors in zip(inputs["BBoxes"], inputs["Scores"], inputs["Anchors"]):
        s = sc[i].reshape(-1)
        cand = np.flatnonzero(s > attrs["score_threshold"])
        cand = cand[np.argsort(-s[cand], kind="stable")][: attrs["nms_top_k"]]
        m, c = np.divmod(cand, sc.shape[2])
        a = anchors.reshape(-1, 4)[m].astype(np.float64)
        b = decode_pixels(a, np.ones_like(a), deltas[i][m].astype(np.float64)) / info[2]
        b[:, 0::2] = np.clip(b[:, 0::2], 0, im_w - 1)
        b[:, 1::2] = np.clip(b[:, 1::2], 0, im_h - 1)
        boxes.append(b)
        scores.append(s[cand])
        labels.append(c)
    b, s, lab = np.concatenate(boxes), np.concatenate(scores), np.concatenate(labels)
    nms = {"score_threshold": -np.inf, "nms_top_k": -1, "nms_threshold": attrs["nms_threshold"],
           "nms_eta": attrs["nms_eta"], "normalized": False}  # fmt: skip
    picked = []
    for c in np.unique(lab):
        sel = np.flatnonzero(lab == c)
        picked += [
            (int(c) + 1, float(s[sel[k]]), b[sel[k]]) for k in greedy_nms(b[sel], s[sel], nms)
        ]
    picked.sort(key=lambda p: -p[1])
    return picked[: attrs["keep_top_k"]] if attrs["keep_top_k"] >= 0 else picked


@kernel("retinanet_detection_output", FLOATS, lod=True, generic=False)
def retinanet_detection_output(inputs, attrs):
    n = inputs["ImInfo"].shape[0]
    rows, offsets = [], [0]
    for i in range(n):
        picked = _retina_image(i, inputs, attrs)
        rows += [[lab, sc, *box] for lab, sc, box in picked]
        offsets.append(offsets[-1] + len(picked))
    dt = inputs["Scores"][0].dtype
    if not rows:
        return {"Out": with_lod(np.full((1, 1), -1, dtype=dt), [[0, 1]])}
    return {"Out": with_lod(np.asarray(rows, dtype=dt), [offsets])}


def _first_or_random(idx, count: int, use_random: bool):
    if len(idx) <= count:
        return idx
    return np.sort(np.random.default_rng().permutation(idx)[:count]) if use_random else idx[:count]


def pixel_iou(a, b):
    """[len(a), len(b)] IoU of pixel boxes (widths count both end pixels)."""
    iw = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]) + 1
    ih = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]) + 1
    inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)
    area_a = (a[:, 2] - a[:, 0] + 1) * (a[:, 3] - a[:, 1] + 1)
    area_b = (b[:, 2] - b[:, 0] + 1) * (b[:, 3] - b[:, 1] + 1)
    return inter / (area_a[:, None] + area_b[None, :] - inter)


def _encode(anchors, gts):
    aw, ah = anchors[:, 2] - anchors[:, 0] + 1, anchors[:, 3] - anchors[:, 1] + 1
    gw, gh = gts[:, 2] - gts[:, 0] + 1, gts[:, 3] - gts[:, 1] + 1
    return np.stack([(gts[:, 0] + 0.5 * gw - anchors[:, 0] - 0.5 * aw) / aw,
                     (gts[:, 1] + 0.5 * gh - anchors[:, 1] - 0.5 * ah) / ah,
                     np.log(gw / aw), np.log(gh / ah)], axis=1)  # fmt: skip


def _rpn_image(anchors, gts, info, attrs) -> tuple:
    """(fg anchors, their inside weight 0/1, their targets, scored anchors, their labels)."""
    t = attrs["rpn_straddle_thresh"]
    inside = np.arange(len(anchors))
    if t >= 0:
        a = anchors
        inside = np.flatnonzero(
            (a[:, 0] >= -t) & (a[:, 1] >= -t) & (a[:, 2] < info[1] + t) & (a[:, 3] < info[0] + t)
        )
    a = anchors[inside]
    iou = pixel_iou(a, gts) if len(gts) else np.zeros((len(a), 0))
    best = iou.max(axis=1, initial=0.0)
    match = iou.argmax(axis=1) if len(gts) else np.zeros(len(a), dtype=np.int64)
    gt_best = iou.max(axis=0, initial=0.0)
    # the best anchors of each ground truth are foreground, ties included (also at IoU 0, as in
    # Fluid 1.8.5: such anchors then fall to background sampling and keep only a weight-0 slot)
    is_fg = (best >= attrs["rpn_positive_overlap"]) | (np.abs(iou - gt_best[None, :]) < 1e-6).any(
        axis=1
    )
    batch = attrs["rpn_batch_size_per_im"]
    fg = _first_or_random(
        np.flatnonzero(is_fg), int(attrs["rpn_fg_fraction"] * batch), attrs["use_random"]
    )
    bg = _first_or_random(
        np.flatnonzero(best < attrs["rpn_negative_overlap"]), batch - len(fg), attrs["use_random"]
    )
    label = np.full(len(a), -1, dtype=np.int32)
    label[fg] = 1
    label[bg] = 0  # background wins: a foreground anchor also sampled as background is not positive
    real_fg = fg[label[fg] == 1]
    # a foreground anchor that background sampling took back still takes a location slot, as
    # Fluid 1.8.5 lays it out: first one slot per such anchor holding the first foreground
    # anchor with weight 0, then the real foreground anchors with weight 1
    fake = np.full(len(fg) - len(real_fg), fg[0] if len(fg) else 0, dtype=np.int64)
    loc = np.concatenate([fake, real_fg]).astype(np.int64)
    weight = np.concatenate([np.zeros(len(fake)), np.ones(len(real_fg))])
    targets = _encode(a[loc], gts[match[loc]]) if len(gts) else np.zeros((len(loc), 4))
    scored = np.concatenate([real_fg, bg]).astype(np.int64)
    return inside[loc], weight, targets, inside[scored], label[scored], match[scored]


@kernel("rpn_target_assign", FLOATS, lod=True, generic=False)
def rpn_target_assign(inputs, attrs):
    anchors = array_of(inputs["Anchor"]).astype(np.float64)
    g_t = inputs["GtBoxes"]
    gts, crowd = array_of(g_t).astype(np.float64), array_of(inputs["IsCrowd"]).reshape(-1)
    info = array_of(inputs["ImInfo"]).astype(np.float64)
    off = _image_offsets(g_t, len(gts))
    if len(off) - 1 != len(info):
        raise ShapeError(
            f"rpn_target_assign: GtBoxes hold {len(off) - 1} images, ImInfo {len(info)}"
        )
    loc, score, tgt, lab, wts = [], [], [], [], []
    loff, soff = [0], [0]
    for i in range(len(info)):
        g = gts[off[i] : off[i + 1]][crowd[off[i] : off[i + 1]] == 0] * info[i, 2]
        fg, w, t, scored, labels, _ = _rpn_image(anchors, g, info[i], attrs)
        base = i * len(anchors)
        loc.append(fg + base)
        wts.append(np.repeat(w[:, None], 4, axis=1))
        tgt.append(t)
        score.append(scored + base)
        lab.append(labels)
        loff.append(loff[-1] + len(fg))
        soff.append(soff[-1] + len(scored))
    dt = inputs["Anchor"].dtype
    return {
        "LocationIndex": with_lod(np.concatenate(loc).astype(np.int32), [loff]),
        "ScoreIndex": with_lod(np.concatenate(score).astype(np.int32), [soff]),
        "TargetBBox": with_lod(np.concatenate(tgt).reshape(-1, 4).astype(dt), [loff]),
        "TargetLabel": with_lod(np.concatenate(lab).astype(np.int32).reshape(-1, 1), [soff]),
        "BBoxInsideWeight": with_lod(np.concatenate(wts).reshape(-1, 4).astype(dt), [loff]),
    }


@kernel("retinanet_target_assign", FLOATS, lod=True, generic=False)
def retinanet_target_assign(inputs, attrs):
    anchors = array_of(inputs["Anchor"]).astype(np.float64)
    g_t = inputs["GtBoxes"]
    gts, crowd = array_of(g_t).astype(np.float64), array_of(inputs["IsCrowd"]).reshape(-1)
    classes = array_of(inputs["GtLabels"]).reshape(-1)
    info = array_of(inputs["ImInfo"]).astype(np.float64)
    off = _image_offsets(g_t, len(gts))
    if len(off) - 1 != len(info):
        raise ShapeError(
            f"retinanet_target_assign: GtBoxes hold {len(off) - 1} images, ImInfo {len(info)}"
        )
    # every anchor is used (none dropped at the image border) and none is sampled away
    rpn = {"rpn_straddle_thresh": -1.0, "rpn_positive_overlap": attrs["positive_overlap"],
           "rpn_negative_overlap": attrs["negative_overlap"], "rpn_batch_size_per_im": 2 * len(anchors) + 2,
           "rpn_fg_fraction": 1.0, "use_random": False}  # fmt: skip
    parts = {k: [] for k in ("loc", "score", "tgt", "lab", "wts")}
    loff, soff, fg_num = [0], [0], []
    for i in range(len(info)):
        keep = crowd[off[i] : off[i + 1]] == 0
        g = gts[off[i] : off[i + 1]][keep] * info[i, 2]
        cls = classes[off[i] : off[i + 1]][keep]
        fg, w, t, scored, labels, match = _rpn_image(anchors, g, info[i], rpn)
        labels = np.where(labels == 1, cls[match] if len(cls) else 0, 0)
        base = i * len(anchors)
        parts["loc"].append(fg + base)
        parts["wts"].append(np.repeat(w[:, None], 4, axis=1))
        parts["tgt"].append(t)
        parts["score"].append(scored + base)
        parts["lab"].append(labels)
        loff.append(loff[-1] + len(fg))
        soff.append(soff[-1] + len(scored))
        fg_num.append(int(w.sum()) + 1)  # Fluid counts one more than the foreground anchors
    dt = inputs["Anchor"].dtype
    return {
        "LocationIndex": with_lod(np.concatenate(parts["loc"]).astype(np.int32), [loff]),
        "ScoreIndex": with_lod(np.concatenate(parts["score"]).astype(np.int32), [soff]),
        "TargetBBox": with_lod(np.concatenate(parts["tgt"]).reshape(-1, 4).astype(dt), [loff]),
        "TargetLabel": with_lod(
            np.concatenate(parts["lab"]).astype(np.int32).reshape(-1, 1), [soff]
        ),
        "BBoxInsideWeight": with_lod(
            np.concatenate(parts["wts"]).reshape(-1, 4).astype(dt), [loff]
        ),
        "ForegroundNumber": np.asarray(fg_num, dtype=np.int32).reshape(-1, 1),
    }
