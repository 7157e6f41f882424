"""detection_map: mean average precision of detections against ground truth, with the
true/false-positive lists accumulated across batches in state variables (what
``fluid.metrics.DetectionMAP`` builds on). No gradient."""

from __future__ import annotations

from oar.registry import Attr, OpDef, VarMeta

AP_TYPES = ("integral", "11point")


def _infer(ins, attrs):
    det, label = ins["DetectRes"], ins["Label"]
    if len(det.shape) != 2 or (det.shape[1] >= 0 and det.shape[1] != 6):
        raise ValueError(
            f"DetectRes must be [M, 6] (label, score, x1, y1, x2, y2), given {list(det.shape)}"
        )
    if len(label.shape) != 2 or (label.shape[1] >= 0 and label.shape[1] not in (5, 6)):
        raise ValueError(
            f"Label must be [N, 6] (label, difficult, x1, y1, x2, y2) or [N, 5], given {list(label.shape)}"
        )
    state = VarMeta((-1, 2), det.dtype, 1)
    return {
        "AccumPosCount": VarMeta((attrs["class_num"], 1), "int32"),
        "AccumTruePos": state,
        "AccumFalsePos": state,
        "MAP": VarMeta((1,), det.dtype),
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "detection_map",
            ["DetectRes", "Label", "HasState?", "PosCount?", "TruePos?", "FalsePos?"],
            ["AccumPosCount", "AccumTruePos", "AccumFalsePos", "MAP"],
            {
                "class_num": Attr(int, check=lambda v: None if v > 0 else "must be positive"),
                "background_label": Attr(int, 0),
                "overlap_threshold": Attr(float, 0.5),
                "evaluate_difficult": Attr(bool, True),
                "ap_type": Attr(
                    str,
                    "integral",
                    lambda v: None if v in AP_TYPES else f"must be one of {AP_TYPES}",
                ),
            },
            infer_shape=_infer,
            kernel_dtype="DetectRes",
            doc="mean average precision, accumulated over batches",
        )
    )
