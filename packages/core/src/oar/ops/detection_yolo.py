"""yolov3_loss: the YOLOv3 training loss of one detection scale (box regression on the cell
and anchor each ground truth falls to, objectness with overlapping predictions ignored,
per-class sigmoid cross entropy), with its gradient for X."""

from __future__ import annotations

from oar.ops._infer import check_float
from oar.registry import Attr, GradSpec, OpDef, VarMeta


def _infer(ins, attrs):
    x, box, label = ins["X"], ins["GTBox"], ins["GTLabel"]
    check_float(ins, "X")
    anchors, mask, cls = attrs["anchors"], attrs["anchor_mask"], attrs["class_num"]
    if len(anchors) % 2:
        raise ValueError(f"anchors must hold (width, height) pairs, given {len(anchors)} values")
    if not mask or any(not 0 <= m < len(anchors) // 2 for m in mask):
        raise ValueError(f"anchor_mask must index the {len(anchors) // 2} anchors, given {mask}")
    if len(x.shape) != 4:
        raise ValueError(f"X must be [N, C, H, W], given {list(x.shape)}")
    c = x.shape[1]
    if c >= 0 and c != len(mask) * (5 + cls):
        raise ValueError(
            f"X must have len(anchor_mask) * (5 + class_num) = {len(mask)} * {5 + cls} = "
            f"{len(mask) * (5 + cls)} channels, given {c}"
        )
    if len(box.shape) != 3 or (box.shape[2] >= 0 and box.shape[2] != 4):
        raise ValueError(f"GTBox must be [N, B, 4] (cx, cy, w, h), given {list(box.shape)}")
    if list(label.shape) != list(box.shape[:2]) and -1 not in label.shape and -1 not in box.shape:
        raise ValueError(
            f"GTLabel must be [N, B] like GTBox {list(box.shape)}, given {list(label.shape)}"
        )
    if label.dtype != "int32":
        raise TypeError(f"GTLabel must be int32, given {label.dtype}")
    n, _, h, w = x.shape
    return {
        "Loss": VarMeta((n,), x.dtype),
        "ObjectnessMask": VarMeta((n, len(mask), h, w), x.dtype),
        "GTMatchMask": VarMeta(tuple(box.shape[:2]), "int32"),
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "yolov3_loss",
            ["X", "GTBox", "GTLabel", "GTScore?"],
            ["Loss", "ObjectnessMask", "GTMatchMask"],
            {
                "anchors": Attr(list),
                "anchor_mask": Attr(list),
                "class_num": Attr(int, check=lambda v: None if v > 0 else "must be positive"),
                "ignore_thresh": Attr(float, 0.7),
                "downsample_ratio": Attr(int, 32, lambda v: None if v > 0 else "must be positive"),
                "use_label_smooth": Attr(bool, True),
                "scale_x_y": Attr(float, 1.0, lambda v: None if v > 0 else "must be positive"),
            },
            infer_shape=_infer,
            grad=GradSpec(("X", "GTBox", "GTLabel", "GTScore", "Loss@GRAD"), ("X@GRAD",)),
            doc="YOLOv3 loss of one output scale",
        )
    )
