"""``center_loss``: half the squared distance of each sample to its class centre; with
``need_update`` the centres (updated in place) move ``alpha`` of the way towards their
samples: ``c_j -= alpha * sum_{i: y_i = j} (c_j - x_i) / (1 + n_j)``."""

from __future__ import annotations

from oar.ops._infer import check_float, compatible, meta
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    x, lab, c = ins["X"], ins["Label"], ins["Centers"]
    check_float(ins, "X")
    if len(x.shape) != 2 or len(c.shape) != 2 or not compatible(x.shape[1], c.shape[1]):
        raise ValueError(
            f"center_loss: X [N, D] and Centers [classes, D] expected, given {list(x.shape)} and {list(c.shape)}"
        )
    if not compatible(lab.shape[0], x.shape[0]):
        raise ValueError(f"center_loss: Label {list(lab.shape)} must have one row per row of X")
    return {
        "SampleCenterDiff": x,
        "Loss": meta((x.shape[0], 1), x.dtype),
        "CentersOut": c,
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "center_loss",
            ["X", "Label", "Centers", "CenterUpdateRate"],
            ["SampleCenterDiff", "Loss", "CentersOut"],
            {"cluster_num": Attr(int, 1), "need_update": Attr(bool, True)},
            infer_shape=_infer,
            kernel_dtype="X",
            grad=GradSpec(("SampleCenterDiff", "Loss@GRAD"), ("X@GRAD",)),
        )
    )
