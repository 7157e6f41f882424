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
    thr = attrs["nms_threshold"]
    eta = attrs["nms_eta"]
    keep: list = []
    for i in candidates(scores, attrs["score_threshold"], attrs["nms_top_k"]):
        if keep and np.any(iou(boxes[i], boxes[keep], attrs["normalized"]) > thr):
            continue
        keep.append(int(i))
        if eta < 1.0 and thr > 0.5:
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
    rows, index = [], []
    for c, i, sc in picked:
        rows.append(np.concatenate([[c, sc], boxes_of(c)[i]]))
        index.append(base + i)
    return rows, index


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
