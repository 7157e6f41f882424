"""Metric ops with state: ``auc`` (bucketed positive/negative counts, cumulative or over a
sliding window of batches) and ``mean_iou``.

``auc``'s StatPos/StatNeg are persistable int64 buffers updated in place: with
``slide_steps == 0`` one row of ``num_thresholds + 1`` buckets accumulates every
batch; otherwise ``(slide_steps + 1) * (num_thresholds + 1) + 1`` values hold the
last ``slide_steps`` batches' rows, their sum and a batch counter.
"""

from __future__ import annotations

from oar.ops._infer import compatible, meta, one_of
from oar.registry import Attr, OpDef


def auc_stat_shape(num_thresholds: int, slide_steps: int) -> list:
    """The shape of auc's StatPos/StatNeg buffers."""
    if slide_steps == 0:
        return [1, num_thresholds + 1]
    return [(slide_steps + 1) * (num_thresholds + 1) + 1]


def _infer_auc(ins, attrs):
    p, lab = ins["Predict"], ins["Label"]
    if len(p.shape) != 2:
        raise ValueError(f"auc: Predict must be [N, C] probabilities, given {list(p.shape)}")
    if lab.dtype not in ("int32", "int64") or not compatible(p.shape[0], lab.shape[0]):
        raise ValueError(
            f"auc: Label must hold int class ids, one per row of Predict {list(p.shape)}, given "
            f"{lab.dtype} {list(lab.shape)}"
        )
    want = auc_stat_shape(attrs["num_thresholds"], attrs["slide_steps"])
    for slot in ("StatPos", "StatNeg"):
        if list(ins[slot].shape) != want:
            raise ValueError(f"auc: {slot} must have shape {want}, given {list(ins[slot].shape)}")
    return {
        "AUC": meta([1], "float64"),
        "StatPosOut": ins["StatPos"],
        "StatNegOut": ins["StatNeg"],
    }


def _infer_mean_iou(ins, attrs):
    p, lab = ins["Predictions"], ins["Labels"]
    if p.dtype not in ("int32", "int64") or lab.dtype not in ("int32", "int64"):
        raise TypeError(
            f"mean_iou: Predictions and Labels must be int, given {p.dtype} and {lab.dtype}"
        )
    if len(p.shape) != len(lab.shape) or not all(map(compatible, p.shape, lab.shape)):
        raise ValueError(
            f"mean_iou: Predictions {list(p.shape)} and Labels {list(lab.shape)} must have one shape"
        )
    c = attrs["num_classes"]
    return {
        "OutMeanIou": meta([1], "float32"),
        "OutWrong": meta([c], "int32"),
        "OutCorrect": meta([c], "int32"),
    }


def _positive(v):
    return None if v > 0 else "must be positive"


def _non_negative(v):
    return None if v >= 0 else "must be >= 0"


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "auc",
            ["Predict", "Label", "StatPos", "StatNeg"],
            ["AUC", "StatPosOut", "StatNegOut"],
            {
                "curve": Attr(str, "ROC", one_of("ROC", "PR")),
                "num_thresholds": Attr(int, 4095, _positive),
                "slide_steps": Attr(int, 1, _non_negative),
            },
            infer_shape=_infer_auc,
            kernel_dtype="Predict",
        )
    )
    registry.register_op(
        OpDef(
            "mean_iou",
            ["Predictions", "Labels", "InWrongs*?", "InCorrects*?", "InMeanIou*?"],
            ["OutMeanIou", "OutWrong", "OutCorrect"],
            {"num_classes": Attr(int, 2, _positive)},
            infer_shape=_infer_mean_iou,
            kernel_dtype="Predictions",
        )
    )
