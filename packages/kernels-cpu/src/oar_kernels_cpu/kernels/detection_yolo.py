"""Kernel of yolov3_loss (numpy only: a loop over the ground-truth boxes).

Forward and backward share one pass that accumulates the loss and its gradient together
(every term is a sigmoid cross entropy or an L1 distance with a closed-form derivative).
"""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel

_EPS = 1e-6


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def _sce(v, z):
    """Sigmoid cross entropy with logits ``v`` against targets ``z``."""
    return np.maximum(v, 0) - v * z + np.log1p(np.exp(-np.abs(v)))


def _pred_boxes(x, attrs):
    """[n, m, h, w, 4] predicted (cx, cy, w, h), normalised by the image."""
    _, m, _, h, w = x.shape
    scale = attrs["scale_x_y"]
    bias = -0.5 * (scale - 1.0)
    mask, anchors = attrs["anchor_mask"], attrs["anchors"]
    size = attrs["downsample_ratio"] * h
    aw = np.array([anchors[2 * a] for a in mask], dtype=np.float64)[None, :, None, None]
    ah = np.array([anchors[2 * a + 1] for a in mask], dtype=np.float64)[None, :, None, None]
    cx = (np.arange(w)[None, None, None, :] + _sigmoid(x[:, :, 0]) * scale + bias) / w
    cy = (np.arange(h)[None, None, :, None] + _sigmoid(x[:, :, 1]) * scale + bias) / h
    return np.stack([cx, cy, np.exp(x[:, :, 2]) * aw / size, np.exp(x[:, :, 3]) * ah / size], -1)


def _iou_cwh(a, b):
    """IoU of center-size boxes a [..., 1, 4] and b [..., K, 4]."""
    lo = np.maximum(a[..., :2] - a[..., 2:] / 2, b[..., :2] - b[..., 2:] / 2)
    hi = np.minimum(a[..., :2] + a[..., 2:] / 2, b[..., :2] + b[..., 2:] / 2)
    inter = np.prod(np.clip(hi - lo, 0, None), axis=-1)
    return inter / (np.prod(a[..., 2:], -1) + np.prod(b[..., 2:], -1) - inter)


def _best_anchor(gw, gh, anchors, size) -> int:
    aw, ah = np.asarray(anchors[0::2]) / size, np.asarray(anchors[1::2]) / size
    inter = np.minimum(gw, aw) * np.minimum(gh, ah)
    return int(np.argmax(inter / (gw * gh + aw * ah - inter)))


def yolo_loss(inputs, attrs):
    """(loss [n], d loss / d X as X's shape, objectness mask, ground-truth match mask)."""
    x0 = inputs["X"]
    n, _, h, w = x0.shape
    mask, anchors, ncls = attrs["anchor_mask"], attrs["anchors"], attrs["class_num"]
    m = len(mask)
    x = x0.astype(np.float64).reshape(n, m, 5 + ncls, h, w)
    gt = inputs["GTBox"].astype(np.float64)
    label = inputs["GTLabel"]
    score = inputs.get("GTScore")
    score = np.ones(label.shape) if score is None else score.astype(np.float64)
    size = attrs["downsample_ratio"] * h
    valid = (gt[..., 2] > _EPS) & (gt[..., 3] > _EPS)
    # predictions overlapping any ground truth enough are not pushed towards "no object"
    pred = _pred_boxes(x, attrs).reshape(n, -1, 1, 4)
    iou = np.where(valid[:, None, :], _iou_cwh(pred, gt[:, None, :, :]), 0.0)
    obj = np.where(iou.max(axis=2, initial=0.0) > attrs["ignore_thresh"], -1.0, 0.0).reshape(
        n, m, h, w
    )
    pos, neg = (1.0 - 1.0 / ncls, 1.0 / ncls) if attrs["use_label_smooth"] else (1.0, 0.0)
    loss = np.zeros(n)
    grad = np.zeros_like(x)
    match = np.full(label.shape, -1, dtype=np.int32)
    for i, t in zip(*np.nonzero(valid)):
        gx, gy, gw, gh = gt[i, t]
        best = _best_anchor(gw, gh, anchors, size)
        match[i, t] = best
        if best not in mask:
            continue
        k = mask.index(best)
        gi, gj = int(gx * w), int(gy * h)
        s = (2.0 - gw * gh) * score[i, t]
        cell = x[i, k, :, gj, gi]
        tgt = np.array([gx * w - gi, gy * h - gj, np.log(gw * size / anchors[2 * best]),
                        np.log(gh * size / anchors[2 * best + 1])])  # fmt: skip
        loss[i] += s * (_sce(cell[:2], tgt[:2]).sum() + np.abs(cell[2:4] - tgt[2:]).sum())
        grad[i, k, :2, gj, gi] += s * (_sigmoid(cell[:2]) - tgt[:2])
        grad[i, k, 2:4, gj, gi] += s * np.sign(cell[2:4] - tgt[2:])
        obj[i, k, gj, gi] = score[i, t]
        z = np.full(ncls, neg)
        z[label[i, t]] = pos
        loss[i] += score[i, t] * _sce(cell[5:], z).sum()
        grad[i, k, 5:, gj, gi] += score[i, t] * (_sigmoid(cell[5:]) - z)
    o = x[:, :, 4]
    is_pos, is_neg = obj > _EPS, (obj <= _EPS) & (obj > -0.5)
    loss += (np.where(is_pos, _sce(o, 1.0) * obj, 0) + np.where(is_neg, _sce(o, 0.0), 0)).sum(
        axis=(1, 2, 3)
    )
    grad[:, :, 4] += np.where(is_pos, (_sigmoid(o) - 1.0) * obj, 0) + np.where(
        is_neg, _sigmoid(o), 0
    )
    return loss, grad.reshape(x0.shape), obj, match


@kernel("yolov3_loss", FLOATS, generic=False)
def yolov3_loss(inputs, attrs):
    dt = inputs["X"].dtype
    loss, _, obj, match = yolo_loss(inputs, attrs)
    return {"Loss": loss.astype(dt), "ObjectnessMask": obj.astype(dt), "GTMatchMask": match}


@kernel("yolov3_loss_grad", FLOATS, generic=False)
def yolov3_loss_grad(inputs, attrs):
    _, grad, _, _ = yolo_loss(inputs, attrs)
    dloss = inputs["Loss@GRAD"].astype(np.float64).reshape(-1, 1, 1, 1)
    return {"X@GRAD": (grad * dloss).astype(inputs["X"].dtype)}
