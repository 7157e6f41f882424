"""Kernels of the NMS ops (numpy only: greedy suppression is a loop over kept boxes).

The IoU of one box against many is vectorised; the loop runs once per kept box.
"""

from __future__ import annotations

import numpy as np
from oar.api import LoDTensor
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import FLOATS, kernel
from oar_kernels_cpu.kernels._sequence import array_of, with_lod


def iou_one(box, boxes, normalized: bool):
    """IoU of ``box`` [4] with each of ``boxes`` [K, 4] (0 where they do not overlap)."""
    off = 0.0 if normalized else 1.0
    iw = np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]) + off
    ih = np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]) + off
    inter = np.where((iw > 0) & (ih > 0), iw * ih, 0.0)
    a = (box[2] - box[0] + off) * (box[3] - box[1] + off)
    b = (boxes[:, 2] - boxes[:, 0] + off) * (boxes[:, 3] - boxes[:, 1] + off)
    union = a + b - inter
    return np.where(inter > 0, inter / np.where(union > 0, union, 1), 0.0)


def candidates(scores, threshold: float, top_k: int):
    """Indices of scores above ``threshold``, best first (ties by index), at most ``top_k``."""
    idx = np.flatnonzero(scores > threshold)
    order = idx[np.argsort(-scores[idx], kind="stable")]
    return order if top_k < 0 else order[:top_k]


def greedy_nms(boxes, scores, attrs, iou=iou_one) -> list:
    """Greedy NMS of one class: indices kept, best first; the threshold decays by nms_eta."""
    order = candidates(scores, attrs["score_threshold"], attrs["nms_top_k"])
    thr, eta, norm = attrs["nms_threshold"], attrs["nms_eta"], attrs["normalized"]
    cand = boxes[order]
    keep: list = []
    if eta >= 1.0:
        # a fixed threshold: each kept box suppresses the later candidates it overlaps, at once
        alive = np.ones(len(order), dtype=bool)
        for i in range(len(order)):
            if alive[i]:
                keep.append(int(order[i]))
                alive[i + 1 :] &= iou(cand[i], cand[i + 1 :], norm) <= thr
        return keep
    kept_rows: list = []
    for i in range(len(order)):
        if kept_rows and np.any(iou(cand[i], cand[kept_rows], norm) > thr):
            continue
        kept_rows.append(i)
        keep.append(int(order[i]))
        if thr > 0.5:
            thr *= eta
    return keep


def _per_image(inputs, op: str):
    """(boxes of class c -> [M, D], scores [C, M], index base) per image, for 3-D or LoD input."""
    b = array_of(inputs["BBoxes"])
    s_t = inputs["Scores"]
    s = array_of(s_t)
    if s.ndim == 3:
        if b.shape[0] != s.shape[0] or b.shape[1] != s.shape[2]:
            raise ShapeError(f"{op}: BBoxes {list(b.shape)} and Scores {list(s.shape)} disagree")
        for n in range(s.shape[0]):
            yield (lambda c, n=n: b[n]), s[n], n * s.shape[2]
        return
    lod = s_t.lod() if isinstance(s_t, LoDTensor) else []
    off = [int(o) for o in lod[-1]] if lod else [0, s.shape[0]]
    if off[-1] != s.shape[0] or b.shape[0] != s.shape[0]:
        raise ShapeError(
            f"{op}: 2-D Scores {list(s.shape)} need BBoxes [M, C, 4] with the same M and a LoD "
            f"ending at M, given BBoxes {list(b.shape)} and LoD {off}"
        )
    for a, z in zip(off[:-1], off[1:]):
        yield (lambda c, a=a, z=z: b[a:z, c]), s[a:z].T, a


def _rows(picked, boxes_of, scores, base):
    """[label, score, corners] rows and global indices of (class, index, score) picks."""
    if not picked:
        return [], []
    labels = np.array([p[0] for p in picked])
    idx = np.array([p[1] for p in picked], dtype=np.int64)
    sc = np.array([p[2] for p in picked])
    corners = np.empty((len(picked), boxes_of(int(labels[0])).shape[-1]))
    for c in np.unique(labels):
        sel = labels == c
        corners[sel] = boxes_of(int(c))[idx[sel]]
    return list(np.column_stack([labels, sc, corners])), list(base + idx)


def _emit(per_image, width: int, dtype, with_index: bool) -> dict:
    rows = [r for img_rows, _ in per_image for r in img_rows]
    if not rows:  # Fluid's "no detection": a single row holding -1
        out = with_lod(np.full((1, 1), -1, dtype=dtype), [[0, 1]])
        res = {"Out": out}
        if with_index:
            res["Index"] = with_lod(np.zeros((0, 1), dtype=np.int32), [[0, 0]])
        return res
    offsets = [0]
    for img_rows, _ in per_image:
        offsets.append(offsets[-1] + len(img_rows))
    res = {"Out": with_lod(np.asarray(rows, dtype=dtype).reshape(-1, width), [offsets])}
    if with_index:
        idx = np.asarray([i for _, ix in per_image for i in ix], dtype=np.int32).reshape(-1, 1)
        res["Index"] = with_lod(idx, [offsets])
    return res


def multiclass_image(boxes_of, scores, attrs, suppress=greedy_nms) -> list:
    """(class, index, score) kept in one image: by class, best first within a class."""
    picked = []
    for c in range(scores.shape[0]):
        if c == attrs["background_label"]:
            continue
        picked += [(c, i, scores[c, i]) for i in suppress(boxes_of(c), scores[c], attrs)]
    k = attrs["keep_top_k"]
    if 0 <= k < len(picked):
        order = np.argsort(-np.asarray([p[2] for p in picked]), kind="stable")[:k]
        picked = [picked[j] for j in sorted(order, key=lambda j: (picked[j][0], -picked[j][2], j))]
    return picked


def _multiclass(inputs, attrs, op: str, with_index: bool) -> dict:
    b = array_of(inputs["BBoxes"])
    if b.shape[-1] != 4:
        raise ShapeError(
            f"{op}: only 4-corner boxes are supported here, given boxes of {b.shape[-1]}"
        )
    per_image = []
    for boxes_of, scores, base in _per_image(inputs, op):
        per_image.append(_rows(multiclass_image(boxes_of, scores, attrs), boxes_of, scores, base))
    return _emit(per_image, 6, b.dtype, with_index)


@kernel("multiclass_nms", FLOATS, lod=True, generic=False)
def multiclass_nms(inputs, attrs):
    return _multiclass(inputs, attrs, "multiclass_nms", False)


@kernel("multiclass_nms2", FLOATS, lod=True, generic=False)
def multiclass_nms2(inputs, attrs):
    return _multiclass(inputs, attrs, "multiclass_nms2", True)


def matrix_decay(boxes, scores, attrs):
    """Matrix NMS: each score times its worst decay against any better-scored box."""
    n = len(boxes)
    if n == 0:
        return scores
    iou = np.stack([iou_one(boxes[j], boxes, attrs["normalized"]) for j in range(n)])
    upper = np.triu(iou, 1)  # [j, i]: overlap of i with the better box j
    comp = upper.max(axis=0)  # how suppressed box j itself is
    if attrs["use_gaussian"]:
        decay = np.exp((comp[:, None] ** 2 - upper**2) * attrs["gaussian_sigma"])
    else:
        decay = (1 - upper) / (1 - comp[:, None])
    decay = np.where(np.triu(np.ones((n, n), bool), 1), decay, np.inf)
    return scores * np.minimum(decay.min(axis=0), 1.0)


@kernel("matrix_nms", FLOATS, lod=True, generic=False)
def matrix_nms(inputs, attrs):
    b = array_of(inputs["BBoxes"])
    per_image = []
    for boxes_of, scores, base in _per_image(inputs, "matrix_nms"):
        picked = []
        for c in range(scores.shape[0]):
            if c == attrs["background_label"]:
                continue
            idx = candidates(scores[c], attrs["score_threshold"], attrs["nms_top_k"])
            decayed = matrix_decay(boxes_of(c)[idx].astype(np.float64), scores[c, idx], attrs)
            picked += [(c, int(i), d) for i, d in zip(idx, decayed) if d > attrs["post_threshold"]]
        order = np.argsort(-np.asarray([p[2] for p in picked]), kind="stable")
        if attrs["keep_top_k"] >= 0:
            order = order[: attrs["keep_top_k"]]
        per_image.append(_rows([picked[j] for j in order], boxes_of, scores, base))
    return _emit(per_image, 6, b.dtype, True)


def _area(poly) -> float:
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def _ccw(poly):
    x, y = poly[:, 0], poly[:, 1]
    return poly if np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)) >= 0 else poly[::-1]


def _clip(subject, clipper):
    """Sutherland-Hodgman: the part of polygon ``subject`` inside convex ``clipper`` (ccw)."""
    out = list(subject)
    for k in range(len(clipper)):
        a, b = clipper[k], clipper[(k + 1) % len(clipper)]
        inp, out = out, []
        if not inp:
            break

        def side(p, a=a, b=b):
            return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])

        for j in range(len(inp)):
            p, q = inp[j], inp[(j + 1) % len(inp)]
            sp, sq = side(p), side(q)
            if sp >= 0:
                out.append(p)
            if (sp >= 0) != (sq >= 0):
                t = sp / (sp - sq)
                out.append(p + t * (q - p))
    return np.array(out).reshape(-1, 2)


def poly_iou_one(box, boxes, normalized: bool = True):
    """IoU of convex polygon ``box`` [2k] (x, y pairs) with each of ``boxes`` [K, 2k]."""
    if box.shape[-1] == 4:
        return iou_one(box, boxes, normalized)
    a = _ccw(box.reshape(-1, 2).astype(np.float64))
    res = np.zeros(len(boxes))
    for i, other in enumerate(boxes):
        b = _ccw(other.reshape(-1, 2).astype(np.float64))
        inter = _area(_clip(a, b)) if len(a) else 0.0
        union = _area(a) + _area(b) - inter
        res[i] = inter / union if union > 0 else 0.0
    return res


def locality_merge(boxes, scores, thr: float, normalized: bool) -> tuple:
    """EAST's pass over boxes in order: each one overlapping the previous (merged) box by more
    than ``thr`` is folded into it (coordinates weighted by score, scores summed)."""
    merged, merged_scores = [], []
    last, last_s = None, 0.0
    for b, s in zip(boxes.astype(np.float64), scores.astype(np.float64)):
        if last is not None and poly_iou_one(last, b[None], normalized)[0] > thr:
            last = (last * last_s + b * s) / (last_s + s)
            last_s += s
            continue
        if last is not None:
            merged.append(last)
            merged_scores.append(last_s)
        last, last_s = b, s
    if last is not None:
        merged.append(last)
        merged_scores.append(last_s)
    return np.array(merged).reshape(-1, boxes.shape[-1]), np.array(merged_scores)


@kernel("locality_aware_nms", FLOATS, lod=True, generic=False)
def locality_aware_nms(inputs, attrs):
    b = array_of(inputs["BBoxes"])
    width = 2 + b.shape[-1]
    per_image = []
    for boxes_of, scores, _ in _per_image(inputs, "locality_aware_nms"):
        picked = []  # (class, merged box, score)
        for c in range(scores.shape[0]):
            if c == attrs["background_label"]:
                continue
            mb, ms = locality_merge(
                boxes_of(c), scores[c], attrs["nms_threshold"], attrs["normalized"]
            )
            keep = greedy_nms(mb, ms, attrs, iou=poly_iou_one)
            picked += [(c, mb[i], ms[i]) for i in keep]
        k = attrs["keep_top_k"]
        if 0 <= k < len(picked):
            order = np.argsort(-np.asarray([p[2] for p in picked]), kind="stable")[:k]
            picked = [
                picked[j] for j in sorted(order, key=lambda j: (picked[j][0], -picked[j][2], j))
            ]
        per_image.append(([np.concatenate([[c, s], box]) for c, box, s in picked], []))
    return _emit(per_image, width, b.dtype, False)
