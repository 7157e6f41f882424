"""Beam search over LoD prefixes: beam_search (one step: keep the best ``beam_size``
candidates of every source), beam_search_decode (back-trace the kept ids of all steps into
whole sentences) and gather_tree (the same back-trace on padded [time, batch, beam] ids).

LoD contract of a beam-search step (Fluid's): ``pre_ids``/``scores`` carry two levels,
level 0 groups prefixes by source sentence, level 1 groups candidate rows by prefix. The
selected ids come back with LoD [sources -> prefixes (absolute), prefixes -> kept items],
so they are the next step's ``pre_ids`` as they are.
"""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import Attr, OpDef

_INTS = ("int32", "int64")


def _infer_gather_tree(ins, attrs):
    ids, parents = ins["Ids"], ins["Parents"]
    if ids.dtype not in _INTS or parents.dtype != ids.dtype:
        raise TypeError(
            f"Ids and Parents must be int64 (or int32) of one dtype, given {ids.dtype}, {parents.dtype}"
        )
    if len(ids.shape) != 3 or tuple(ids.shape) != tuple(parents.shape):
        raise ValueError(
            f"Ids and Parents must both be [max_time, batch, beam], given {list(ids.shape)}, "
            f"{list(parents.shape)}"
        )
    return {"Out": ids}


def _infer_beam_search(ins, attrs):
    pre_ids, scores, ids = ins["pre_ids"], ins["scores"], ins.get("ids")
    if pre_ids.dtype not in _INTS:
        raise TypeError(f"pre_ids must hold int64 word ids, given {pre_ids.dtype}")
    if scores.dtype not in ("float32", "float64"):
        raise TypeError(f"scores must be float32 (or float64), given {scores.dtype}")
    if ids is not None and ids.dtype not in _INTS:
        raise TypeError(f"ids must hold int64 word ids, given {ids.dtype}")
    if (
        ids is not None
        and len(ids.shape) == len(scores.shape)
        and ids.shape[1:] != scores.shape[1:]
    ):
        raise ValueError(
            f"ids and scores must have the same candidates per row, given {list(ids.shape)} and "
            f"{list(scores.shape)}"
        )
    return {
        "selected_ids": meta((-1, 1), pre_ids.dtype, 2),
        "selected_scores": meta((-1, 1), scores.dtype, 2),
        "parent_idx": meta((-1,), "int32"),
    }


def _infer_decode(ins, attrs):
    ids, scores = ins["Ids"], ins["Scores"]
    return {
        "SentenceIds": meta((-1,), ids[0].dtype if ids else "int64", 2),
        "SentenceScores": meta((-1,), scores[0].dtype if scores else "float32", 2),
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "gather_tree",
            ["Ids", "Parents"],
            ["Out"],
            infer_shape=_infer_gather_tree,
            doc="full beam-search paths from per-step ids and parent beam indices",
        )
    )
    registry.register_op(
        OpDef(
            "beam_search",
            ["pre_ids", "pre_scores", "ids?", "scores"],
            ["selected_ids", "selected_scores", "parent_idx?"],
            {
                "level": Attr(int, 0),
                "beam_size": Attr(int),
                "end_id": Attr(int),
                "is_accumulated": Attr(bool, True),
            },
            infer_shape=_infer_beam_search,
            kernel_dtype="scores",
            doc="one beam-search step: the best beam_size candidates of every source",
        )
    )
    registry.register_op(
        OpDef(
            "beam_search_decode",
            ["Ids*", "Scores*"],
            ["SentenceIds", "SentenceScores"],
            {"beam_size": Attr(int), "end_id": Attr(int)},
            infer_shape=_infer_decode,
            kernel_dtype="Scores",
            doc="whole sentences (ids and scores) back-traced from every beam-search step",
        )
    )
