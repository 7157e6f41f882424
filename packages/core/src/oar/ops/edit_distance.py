"""edit_distance (Levenshtein distance between hypothesis and reference sequences) and
sequence_erase (drop given tokens from sequences, for edit_distance's ignored_tokens)."""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import Attr, OpDef

_INTS = ("int32", "int64")


def _infer_distance(ins, attrs):
    for slot in ("Hyps", "Refs"):
        if ins[slot].dtype not in _INTS:
            raise TypeError(f"{slot} must hold int64 token ids, given {ins[slot].dtype}")
    return {"Out": meta((-1, 1), "float32"), "SequenceNum": meta((1,), "int64")}


def _infer_erase(ins, attrs):
    x = ins["X"]
    if x.dtype not in _INTS:
        raise TypeError(f"X must hold int token ids, given {x.dtype}")
    return {"Out": meta((-1, 1), x.dtype, max(x.lod_level, 1))}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "edit_distance",
            ["Hyps", "Refs", "HypsLength?", "RefsLength?"],
            ["Out", "SequenceNum"],
            {"normalized": Attr(bool, False)},
            infer_shape=_infer_distance,
            kernel_dtype="Hyps",
            doc="Levenshtein distance of every hypothesis to its reference",
        )
    )
    registry.register_op(
        OpDef(
            "sequence_erase",
            ["X"],
            ["Out"],
            {"tokens": Attr(list, [])},
            infer_shape=_infer_erase,
            doc="remove the given tokens from every sequence",
        )
    )
