"""Kernels of the SSD target ops (numpy only: per-image greedy loops)."""

from __future__ import annotations

import math

import numpy as np
from oar.api import LoDTensor
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import FLOATS, NUMERIC, kernel
from oar_kernels_cpu.kernels._poly_mask import poly_to_mask
from oar_kernels_cpu.kernels._sequence import array_of, with_lod
from oar_kernels_cpu.kernels.detection_rpn import pixel_iou

_EPS = 1e-6


def _offsets(t, rows: int) -> list:
    """The last-level LoD offsets of ``t`` (one image holding every row when it has none)."""
    if isinstance(t, LoDTensor) and t.lod():
        return [int(o) for o in t.lod()[-1]]
    return [0, rows]


def bipartite(dist):
    """Greedy global matching: the best remaining (row, col) pair first, each used once."""
    rows, cols = dist.shape
    idx = np.full(cols, -1, dtype=np.int32)
    val = np.zeros(cols, dtype=dist.dtype)
    work = dist.astype(np.float64).copy()
    for _ in range(min(rows, cols)):
        flat = int(np.argmax(work))
        r, c = divmod(flat, cols)
        if work[r, c] < _EPS:
            break
        idx[c], val[c] = r, dist[r, c]
        work[r, :] = -1.0
        work[:, c] = -1.0
    return idx, val


@kernel("bipartite_match", FLOATS, lod=True, generic=False)
def bipartite_match(inputs, attrs):
    t = inputs["DistMat"]
    d = array_of(t)
    off = _offsets(t, d.shape[0])
    n, cols = len(off) - 1, d.shape[1]
    idx = np.full((n, cols), -1, dtype=np.int32)
    val = np.zeros((n, cols), dtype=d.dtype)
    for i in range(n):
        block = d[off[i] : off[i + 1]]
        if not len(block):
            continue
        idx[i], val[i] = bipartite(block)
        if attrs["match_type"] == "per_prediction":
            best = block.argmax(axis=0)
            best_val = block[best, np.arange(cols)]
            extra = (idx[i] == -1) & (best_val >= attrs["dist_threshold"])
            idx[i][extra], val[i][extra] = best[extra], best_val[extra]
    return {"ColToRowMatchIndices": idx, "ColToRowMatchDist": val}


@kernel("target_assign", NUMERIC, lod=True, generic=False)
def target_assign(inputs, attrs):
    t = inputs["X"]
    x = array_of(t)
    if x.ndim == 2:
        x = x[:, None, :]
    match = array_of(inputs["MatchIndices"])
    n, p = match.shape
    off = _offsets(t, x.shape[0])
    if len(off) - 1 != n:
        raise ShapeError(
            f"target_assign: X holds {len(off) - 1} images in its LoD, MatchIndices {n}"
        )
    out = np.full((n, p, x.shape[2]), attrs["mismatch_value"], dtype=x.dtype)
    weight = np.zeros((n, p, 1), dtype=np.float32)
    cols = np.arange(p) if x.shape[1] == p else np.zeros(p, dtype=np.int64)
    for i in range(n):
        hit = match[i] > -1
        if np.any(match[i][hit] >= off[i + 1] - off[i]):
            raise ShapeError(
                f"target_assign: image {i} matches a row beyond its {off[i + 1] - off[i]} rows"
            )
        out[i, hit] = x[off[i] + match[i][hit], cols[hit]]
        weight[i, hit] = 1.0
    neg = inputs.get("NegIndices")
    if neg is not None:
        nv = array_of(neg).reshape(-1)
        noff = _offsets(neg, len(nv))
        for i in range(len(noff) - 1):
            sel = nv[noff[i] : noff[i + 1]]
            out[i, sel] = attrs["mismatch_value"]
            weight[i, sel] = 1.0
    return {"Out": out, "OutWeight": weight}


def _hard_examples(loss, match, sample_size):
    """``hard_example`` mining of one image: the ``sample_size`` priors of highest loss are
    kept; the negatives among them are returned, the positives outside them unmatched."""
    top = np.argsort(-loss, kind="stable")[:sample_size]
    kept = np.zeros(len(match), dtype=bool)
    kept[top] = True
    updated = np.where(kept, match, -1)
    return np.flatnonzero(kept & (match == -1)), updated


@kernel("mine_hard_examples", FLOATS, lod=True, generic=False)
def mine_hard_examples(inputs, attrs):
    loss = array_of(inputs["ClsLoss"])
    match = array_of(inputs["MatchIndices"])
    dist = array_of(inputs["MatchDist"])
    hard = attrs["mining_type"] == "hard_example"
    if hard and inputs.get("LocLoss") is not None:
        loss = loss + array_of(inputs["LocLoss"])
    updated = match.copy()
    negs, offsets = [], [0]
    for i in range(match.shape[0]):
        if hard:
            chosen, updated[i] = _hard_examples(loss[i], match[i], attrs["sample_size"])
        else:
            cand = np.flatnonzero((match[i] == -1) & (dist[i] < attrs["neg_dist_threshold"]))
            k = min(int((match[i] != -1).sum() * attrs["neg_pos_ratio"]), len(cand))
            chosen = np.sort(cand[np.argsort(-loss[i, cand], kind="stable")[:k]])
        negs.append(chosen)
        offsets.append(offsets[-1] + len(chosen))
    flat = np.concatenate(negs).astype(np.int32).reshape(-1, 1)
    return {"NegIndices": with_lod(flat, [offsets]), "UpdatedMatchIndices": updated}


def _deltas(boxes, gts, weights):
    bw, bh = boxes[:, 2] - boxes[:, 0] + 1, boxes[:, 3] - boxes[:, 1] + 1
    gw, gh = gts[:, 2] - gts[:, 0] + 1, gts[:, 3] - gts[:, 1] + 1
    d = np.stack([(gts[:, 0] + 0.5 * gw - boxes[:, 0] - 0.5 * bw) / bw,
                  (gts[:, 1] + 0.5 * gh - boxes[:, 1] - 0.5 * bh) / bh,
                  np.log(gw / bw), np.log(gh / bh)], axis=1)  # fmt: skip
    return d / np.asarray(weights, dtype=np.float64)


def _sample(idx, count: int, use_random: bool):
    if len(idx) <= count:
        return idx
    return np.sort(np.random.default_rng().permutation(idx)[:count]) if use_random else idx[:count]


def _candidate_boxes(rois, gts, crowd, scale, cascade) -> np.ndarray:
    """The boxes to label, at the original image scale.

    Fast R-CNN: the non-crowd ground truth, then the proposals. Cascade R-CNN: the proposals
    of the previous stage only, dropping empty ones (``x2 - x1 + 1 <= 0`` or the same in y).
    """
    props = rois.astype(np.float64) / scale
    if not cascade:
        return np.concatenate([gts[~crowd], props])
    keep = (props[:, 2] - props[:, 0] + 1 > 0) & (props[:, 3] - props[:, 1] + 1 > 0)
    return props[keep]


def _proposal_labels(rois, gt_cls, crowd, gts, info, attrs) -> tuple:
    scale = float(info[2])
    gts, gt_cls, crowd = gts.astype(np.float64), gt_cls.reshape(-1), crowd.reshape(-1) != 0
    # crowd boxes are matched against but are not samples themselves
    cascade = attrs["is_cascade_rcnn"]
    boxes = _candidate_boxes(rois, gts, crowd, scale, cascade)
    if len(gts) and len(boxes):
        iou = pixel_iou(boxes, gts)
        best, match = iou.max(axis=1), iou.argmax(axis=1)
    else:
        best, match = np.full(len(boxes), -1.0), np.zeros(len(boxes), dtype=np.int64)
    is_fg = best >= attrs["fg_thresh"]
    bg_cand = np.flatnonzero((best < attrs["bg_thresh_hi"]) & (best >= attrs["bg_thresh_lo"]))
    if cascade:  # every candidate is kept, in order: no sampling
        fg, bg = np.flatnonzero(is_fg), bg_cand
    else:
        per_im = attrs["batch_size_per_im"]
        fg = _sample(np.flatnonzero(is_fg), int(math.floor(per_im * attrs["fg_fraction"])),
                     attrs["use_random"])  # fmt: skip
        bg = _sample(bg_cand, per_im - len(fg), attrs["use_random"])
    sel = np.concatenate([fg, bg]).astype(np.int64)
    labels = np.zeros(len(sel), dtype=np.int32)
    labels[: len(fg)] = gt_cls[match[fg]] if len(gts) else 0
    width = 4 * attrs["class_nums"]
    targets = np.zeros((len(sel), width))
    weights = np.zeros((len(sel), width))
    if len(fg):
        d = _deltas(boxes[fg], gts[match[fg]], attrs["bbox_reg_weights"])
        slot = (
            np.ones(len(fg), dtype=np.int64)
            if attrs["is_cls_agnostic"]
            else labels[: len(fg)].astype(np.int64)
        )
        cols = 4 * slot[:, None] + np.arange(4)[None, :]
        rows = np.arange(len(fg))[:, None]
        targets[rows, cols] = d
        weights[rows, cols] = 1.0
    return boxes[sel] * scale, labels, targets, weights


@kernel("generate_proposal_labels", FLOATS, lod=True, generic=False)
def generate_proposal_labels(inputs, attrs):
    rois_t, gt_t = inputs["RpnRois"], inputs["GtBoxes"]
    rois, gts = array_of(rois_t), array_of(gt_t)
    cls, crowd = array_of(inputs["GtClasses"]), array_of(inputs["IsCrowd"])
    info = array_of(inputs["ImInfo"])
    roff, goff = _offsets(rois_t, len(rois)), _offsets(gt_t, len(gts))
    if len(roff) != len(goff) or len(roff) - 1 != len(info):
        raise ShapeError(
            f"generate_proposal_labels: RpnRois hold {len(roff) - 1} images, GtBoxes {len(goff) - 1}, "
            f"ImInfo {len(info)}"
        )
    parts = [
        _proposal_labels(rois[roff[i] : roff[i + 1]], cls[goff[i] : goff[i + 1]], crowd[goff[i] : goff[i + 1]],
                         gts[goff[i] : goff[i + 1]], info[i], attrs)
        for i in range(len(info))
    ]  # fmt: skip
    offsets = np.concatenate([[0], np.cumsum([len(p[1]) for p in parts])]).tolist()
    dt = rois.dtype
    out = {}
    for k, (slot, dtype) in enumerate((("Rois", dt), ("LabelsInt32", np.int32), ("BboxTargets", dt),
                                        ("BboxInsideWeights", dt))):  # fmt: skip
        arr = np.concatenate([p[k] for p in parts]).astype(dtype)
        out[slot] = with_lod(arr.reshape(len(arr), -1), [offsets])
    out["BboxOutsideWeights"] = with_lod(array_of(out["BboxInsideWeights"]).copy(), [offsets])
    return out


def _objects(segms_t, image: int) -> list:
    """The polygons ([K, 2] point arrays) of each object of ``image``."""
    pts = array_of(segms_t)
    lod = [[int(o) for o in level] for level in segms_t.lod()]
    objs = []
    for ob in range(lod[0][image], lod[0][image + 1]):
        objs.append([pts[lod[2][p] : lod[2][p + 1]] for p in range(lod[1][ob], lod[1][ob + 1])])
    return objs


def _mask_image(rois, labels, objs, classes, crowd, scale, attrs) -> tuple:
    m, n_cls = attrs["resolution"], attrs["num_classes"]
    keep = [k for k in range(len(objs)) if not crowd[k] and classes[k] > 0]
    fg = np.flatnonzero(labels > 0)
    if not len(fg) or not keep:  # no target: the first ROI, every class ignored (-1)
        return (
            rois[:1],
            np.zeros(1, dtype=np.int32),
            np.full((1, n_cls * m * m), -1, dtype=np.int32),
        )
    boxes = np.array([np.concatenate([np.min(np.concatenate(objs[k]), 0), np.max(np.concatenate(objs[k]), 0)])
                      for k in keep], dtype=np.float64)  # fmt: skip
    orig = rois[fg].astype(np.float64) / scale
    match = pixel_iou(orig, boxes).argmax(axis=1)
    masks = np.full((len(fg), n_cls, m, m), -1, dtype=np.int32)
    for i, (box, k) in enumerate(zip(orig, match)):
        w, h = max(box[2] - box[0], 1.0), max(box[3] - box[1], 1.0)
        mask = np.zeros((m, m), dtype=np.uint8)
        for poly in objs[keep[k]]:
            xy = np.stack([(poly[:, 0] - box[0]) * m / w, (poly[:, 1] - box[1]) * m / h], axis=1)
            mask |= poly_to_mask(xy.reshape(-1).tolist(), m, m)
        masks[i, labels[fg[i]]] = mask
    return rois[fg], fg.astype(np.int32), masks.reshape(len(fg), -1)


@kernel("generate_mask_labels", FLOATS, lod=True, generic=False)
def generate_mask_labels(inputs, attrs):
    rois_t, segms_t = inputs["Rois"], inputs["GtSegms"]
    if not (isinstance(segms_t, LoDTensor) and len(segms_t.lod()) == 3):
        raise ShapeError(
            "generate_mask_labels: GtSegms must carry 3 LoD levels (objects, polygons, points)"
        )
    rois, labels = array_of(rois_t), array_of(inputs["LabelsInt32"]).reshape(-1)
    classes, crowd = (
        array_of(inputs["GtClasses"]).reshape(-1),
        array_of(inputs["IsCrowd"]).reshape(-1),
    )
    info = array_of(inputs["ImInfo"])
    roff = _offsets(rois_t, len(rois))
    goff = [int(o) for o in segms_t.lod()[0]]
    parts = []
    for i in range(len(info)):
        a, b = roff[i], roff[i + 1]
        objs = _objects(segms_t, i)
        parts.append(_mask_image(rois[a:b], labels[a:b], objs, classes[goff[i] : goff[i + 1]],
                                 crowd[goff[i] : goff[i + 1]], float(info[i, 2]), attrs))  # fmt: skip
    offsets = np.concatenate([[0], np.cumsum([len(p[1]) for p in parts])]).tolist()
    return {
        "MaskRois": with_lod(
            np.concatenate([p[0] for p in parts]).astype(rois.dtype).reshape(-1, 4), [offsets]
        ),
        "RoiHasMaskInt32": with_lod(
            np.concatenate([p[1] for p in parts]).reshape(-1, 1), [offsets]
        ),
        "MaskInt32": with_lod(np.concatenate([p[2] for p in parts]), [offsets]),
    }
