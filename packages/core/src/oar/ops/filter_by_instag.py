"""``filter_by_instag``: keep the instances whose tag set (a LoD sequence per instance in
Ins_tag) meets Filter_tag. An instance is a row of Ins, or with ``is_lod`` a sequence of
Ins. Out keeps the kept rows with one LoD entry per kept instance; LossWeight is 1 per kept
instance; IndexMap gives each Out row's source row. With nothing kept, Out is one row of
``out_val_if_empty`` with LossWeight 0."""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    x = ins["Ins"]
    if ins["Ins_tag"].dtype not in ("int32", "int64") or ins["Filter_tag"].dtype not in (
        "int32",
        "int64",
    ):
        raise TypeError("filter_by_instag: Ins_tag and Filter_tag must be int tags")
    return {
        "Out": meta((-1,) + tuple(x.shape[1:]), x.dtype, 1),
        "LossWeight": meta((-1, 1), x.dtype),
        "IndexMap": meta((-1, 1), "int64"),
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "filter_by_instag",
            ["Ins", "Ins_tag", "Filter_tag"],
            ["Out", "LossWeight", "IndexMap"],
            {"is_lod": Attr(bool, False), "out_val_if_empty": Attr(int, 0)},
            infer_shape=_infer,
            kernel_dtype="Ins",
            grad=GradSpec(("Ins", "IndexMap", "LossWeight", "Out@GRAD"), ("Ins@GRAD",)),
        )
    )
