"""top_k and accuracy (metrics built on the top-k predictions)."""

from __future__ import annotations

from oar.ops._infer import compatible, meta
from oar.registry import Attr, GradSpec, OpDef


def _infer_topk(ins, attrs):
    x = ins["X"]
    k = attrs["k"]
    if k < 1:
        raise ValueError(f"k must be >= 1, given {k}")
    if x.shape[-1] >= 0 and k > x.shape[-1]:
        raise ValueError(f"k={k} is larger than X's last dim {x.shape[-1]}")
    shape = tuple(x.shape[:-1]) + (k,)
    return {"Out": meta(shape, x.dtype, x.lod_level), "Indices": meta(shape, "int64", x.lod_level)}


def _infer_accuracy(ins, attrs):
    idx, label = ins["Indices"], ins["Label"]
    if label.dtype not in ("int64", "int32"):
        raise TypeError(f"Label must be int64 class ids, given {label.dtype}")
    if len(label.shape) != 2 or (label.shape[1] != 1 and label.shape[1] >= 0):
        raise ValueError(f"Label must have shape [N, 1], given {list(label.shape)}")
    if not compatible(idx.shape[0], label.shape[0]):
        raise ValueError(
            f"Indices {list(idx.shape)} and Label {list(label.shape)} differ in batch size"
        )
    return {
        "Accuracy": meta([1], "float32"),
        "Correct": meta([1], "int32"),
        "Total": meta([1], "int32"),
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "top_k",
            ["X", "K?"],
            ["Out", "Indices"],
            {"k": Attr(int, 1)},
            infer_shape=_infer_topk,
            grad=GradSpec(("X", "Indices", "Out@GRAD"), ("X@GRAD",)),
            share_lod=(("X", "Out"), ("X", "Indices")),
        )
    )
    registry.register_op(
        OpDef(
            "accuracy",
            ["Out", "Indices", "Label"],
            ["Accuracy", "Correct", "Total"],
            {},
            infer_shape=_infer_accuracy,
            kernel_dtype="Out",
        )
    )
