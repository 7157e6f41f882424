"""Rank tables for ``DynamicRNN``: sequences sorted by length, and the time-major views.

``lod_rank_table`` sorts the sequences of a LoD input by length (longest first, stable);
``lod_tensor_to_array`` turns a LoD tensor into one batch per time step (the sequences
still running, in rank order); ``array_to_lod_tensor`` puts such an array back into the
LoD tensor; ``shrink_rnn_memory`` keeps the rows of the sequences still running at step
``I``; ``reorder_lod_tensor_by_rank`` puts per-sequence rows into rank order. A rank table
value is a host object (``oar_kernels_cpu.kernels.lod_rank.RankTable``).
"""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import Attr, GradOpDesc, OpDef


def _same_rows_unknown(slot: str, out: str = "Out"):
    def infer(ins, attrs):
        x = ins[slot]
        return {out: meta([-1] + list(x.shape[1:]), x.dtype, x.lod_level)}

    return infer


def _to_array_grad(ctx):
    return [
        GradOpDesc(
            "array_to_lod_tensor",
            {"X": ctx.output_grad("Out"), "RankTable": ctx.input("RankTable")},
            {"Out": ctx.input_grad("X")},
        )
    ]


def _from_array_grad(ctx):
    return [
        GradOpDesc(
            "lod_tensor_to_array",
            {"X": ctx.output_grad("Out"), "RankTable": ctx.input("RankTable")},
            {"Out": ctx.input_grad("X")},
        )
    ]


def _shrink_grad(ctx):
    return [
        GradOpDesc(
            "shrink_rnn_memory_grad",
            {"X": ctx.input("X"), "Out@GRAD": ctx.output_grad("Out")},
            {"X@GRAD": ctx.input_grad("X")},
        )
    ]


def _reorder_grad(ctx):
    return [
        GradOpDesc(
            "reorder_lod_tensor_by_rank_grad",
            {"RankTable": ctx.input("RankTable"), "Out@GRAD": ctx.output_grad("Out")},
            {"X@GRAD": ctx.input_grad("X")},
        )
    ]


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "lod_rank_table",
            ["X"],
            ["Out"],
            {"level": Attr(int, 0)},
            infer_shape=lambda ins, a: {"Out": meta([-1], ins["X"].dtype)},
        )
    )
    registry.register_op(
        OpDef(
            "max_sequence_len",
            ["RankTable"],
            ["Out"],
            {},
            infer_shape=lambda ins, a: {"Out": meta([1], "int64")},
        )
    )
    registry.register_op(
        OpDef(
            "lod_tensor_to_array",
            ["X", "RankTable"],
            ["Out"],
            {},
            infer_shape=_same_rows_unknown("X"),
            grad=_to_array_grad,
            kernel_dtype="X",
        )
    )
    registry.register_op(
        OpDef(
            "array_to_lod_tensor",
            ["X", "RankTable"],
            ["Out"],
            {},
            infer_shape=_same_rows_unknown("X"),
            grad=_from_array_grad,
            kernel_dtype="X",
        )
    )
    registry.register_op(
        OpDef(
            "shrink_rnn_memory",
            ["X", "RankTable", "I"],
            ["Out"],
            {},
            infer_shape=_same_rows_unknown("X"),
            grad=_shrink_grad,
            kernel_dtype="X",
        )
    )
    registry.register_op(
        OpDef("shrink_rnn_memory_grad", ["X", "Out@GRAD"], ["X@GRAD"], {}, kernel_dtype="X")
    )
    registry.register_op(
        OpDef(
            "reorder_lod_tensor_by_rank",
            ["X", "RankTable"],
            ["Out"],
            {},
            infer_shape=_same_rows_unknown("X"),
            grad=_reorder_grad,
            kernel_dtype="X",
        )
    )
    registry.register_op(
        OpDef(
            "reorder_lod_tensor_by_rank_grad",
            ["RankTable", "Out@GRAD"],
            ["X@GRAD"],
            {},
            kernel_dtype="Out@GRAD",
        )
    )
