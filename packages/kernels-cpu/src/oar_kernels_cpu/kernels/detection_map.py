"""Kernel of detection_map (numpy only: per-image matching of detections to ground truth).

State between batches: positives per class ([C, 1] int32) and, per class, the (score, flag)
pairs of every detection so far as true and false positives (LoD tensors with one sequence
per class).
"""

from __future__ import annotations

import numpy as np
from oar.api import LoDTensor
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import FLOATS, kernel
from oar_kernels_cpu.kernels._sequence import array_of, with_lod


def _offsets(t, rows: int) -> list:
    """The last-level LoD offsets of ``t``; one image of every row without LoD."""
    if isinstance(t, LoDTensor) and t.lod():
        return [int(o) for o in t.lod()[-1]]
    return [0, rows]


def _iou(box, boxes):
    iw = np.clip(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0, None)
    ih = np.clip(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0, None)
    inter = iw * ih
    union = (box[2] - box[0]) * (box[3] - box[1]) + (boxes[:, 2] - boxes[:, 0]) * (
        boxes[:, 3] - boxes[:, 1]
    )
    return inter / np.maximum(union - inter, 1e-10)


def _state_lists(inputs, c: int) -> tuple:
    """(pos counts [c], tp lists, fp lists) carried in from earlier batches, or empty."""
    pos = np.zeros(c, dtype=np.int64)
    tp: list = [[] for _ in range(c)]
    fp: list = [[] for _ in range(c)]
    has = inputs.get("HasState")
    if has is None or not int(array_of(has).reshape(-1)[0]) or inputs.get("PosCount") is None:
        return pos, tp, fp
    pos += array_of(inputs["PosCount"]).reshape(-1)[:c].astype(np.int64)
    for slot, acc in (("TruePos", tp), ("FalsePos", fp)):
        t = inputs[slot]
        a = array_of(t)
        off = _offsets(t, a.shape[0])
        for k in range(min(c, len(off) - 1)):
            acc[k] = [tuple(r) for r in a[off[k] : off[k + 1]].tolist()]
    return pos, tp, fp


def _match_image(det, gt, attrs, pos, tp, fp) -> None:
    """Count one image's positives and mark its detections true or false positives."""
    wide = gt.shape[1] == 6
    labels = gt[:, 0].astype(np.int64)
    difficult = gt[:, 1] != 0 if wide else np.zeros(len(gt), dtype=bool)
    boxes = gt[:, 2:] if wide else gt[:, 1:]
    for lab in labels[~difficult | attrs["evaluate_difficult"]]:
        if lab != attrs["background_label"]:
            pos[lab] += 1
    for lab in np.unique(det[:, 0].astype(np.int64)):
        mine = det[det[:, 0].astype(np.int64) == lab]
        mine = mine[np.argsort(-mine[:, 1], kind="stable")]
        cand = np.flatnonzero(labels == lab)
        seen = np.zeros(len(cand), dtype=bool)
        for row in mine:
            score = float(row[1])
            if len(cand):
                ious = _iou(row[2:6], boxes[cand])
                j = int(np.argmax(ious))
                if ious[j] > attrs["overlap_threshold"]:
                    if difficult[cand[j]] and not attrs["evaluate_difficult"]:
                        continue
                    hit = not seen[j]
                    seen[j] = True
                    tp[lab].append((score, 1.0 if hit else 0.0))
                    fp[lab].append((score, 0.0 if hit else 1.0))
                    continue
            tp[lab].append((score, 0.0))
            fp[lab].append((score, 1.0))


def average_precision(tp_pairs, fp_pairs, positives: int, ap_type: str) -> float:
    order = np.argsort(-np.array([s for s, _ in tp_pairs]), kind="stable")
    tpc = np.cumsum(np.array([f for _, f in tp_pairs])[order])
    fpc = np.cumsum(np.array([f for _, f in fp_pairs])[order])
    precision = tpc / np.maximum(tpc + fpc, 1e-10)
    recall = tpc / positives
    if ap_type == "11point":
        return float(
            sum(precision[recall >= t].max(initial=0.0) for t in np.linspace(0, 1, 11)) / 11
        )
    steps = np.diff(np.concatenate([[0.0], recall]))
    return float(np.sum(precision * np.abs(steps) * (np.abs(steps) > 1e-6)))


def mean_ap(pos, tp, fp, attrs) -> float:
    aps = []
    for k in range(len(pos)):
        if k == attrs["background_label"] or pos[k] == 0:
            continue
        aps.append(average_precision(tp[k], fp[k], int(pos[k]), attrs["ap_type"]) if tp[k] else 0.0)
    return float(np.mean(aps)) if aps else 0.0


def _state_out(lists, dtype) -> LoDTensor:
    offsets = [0]
    for rows in lists:
        offsets.append(offsets[-1] + len(rows))
    flat = [r for rows in lists for r in rows]
    return with_lod(np.asarray(flat, dtype=dtype).reshape(-1, 2), [offsets])


@kernel("detection_map", FLOATS, lod=True, generic=False)
def detection_map(inputs, attrs):
    c = attrs["class_num"]
    det_t, gt_t = inputs["DetectRes"], inputs["Label"]
    det, gt = array_of(det_t), array_of(gt_t)
    goff = _offsets(gt_t, gt.shape[0])
    if det.ndim == 2 and det.shape[1] == 1:  # multiclass_nms's "no detection" row
        det, doff = np.zeros((0, 6), dtype=det.dtype), [0] * len(goff)
    else:
        doff = _offsets(det_t, det.shape[0])
    if len(doff) != len(goff):
        raise ShapeError(
            f"detection_map: DetectRes holds {len(doff) - 1} images in its LoD, Label {len(goff) - 1}"
        )
    if det.size and det[:, 0].max(initial=0) >= c or gt.size and gt[:, 0].max(initial=0) >= c:
        raise ShapeError(f"detection_map: a label is not below class_num {c}")
    pos, tp, fp = _state_lists(inputs, c)
    for i in range(len(doff) - 1):
        _match_image(det[doff[i] : doff[i + 1]], gt[goff[i] : goff[i + 1]], attrs, pos, tp, fp)
    return {
        "AccumPosCount": pos.astype(np.int32).reshape(-1, 1),
        "AccumTruePos": _state_out(tp, det.dtype),
        "AccumFalsePos": _state_out(fp, det.dtype),
        "MAP": np.array([mean_ap(pos, tp, fp, attrs)], dtype=det.dtype),
    }
