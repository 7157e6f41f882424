"""Sequence rearrangements on the last LoD level: sequence_reshape, sequence_reverse,
sequence_concat, sequence_slice, sequence_enumerate, sequence_scatter."""

from __future__ import annotations

from oar.ops._infer import check_same_dtype, meta
from oar.registry import Attr, GradSpec, OpDef

_INTS = ("int32", "int64")


def _positive(v):
    return None if v > 0 else "must be > 0"


def _infer_reshape(ins, attrs):
    x = ins["X"]
    if len(x.shape) != 2:
        raise ValueError(f"X must be 2-D [rows, width], given shape {list(x.shape)}")
    return {"Out": meta((-1, attrs["new_dim"]), x.dtype, max(x.lod_level, 1))}


def _infer_same(out: str):
    def infer(ins, attrs):
        x = ins["X"]
        return {out: meta((-1,) + tuple(x.shape[1:]), x.dtype, max(x.lod_level, 1))}

    return infer


def _infer_concat(ins, attrs):
    xs = ins["X"]
    dtype = xs[0].dtype
    for i, x in enumerate(xs):
        if x.dtype != dtype:
            raise TypeError(f"X[{i}] has dtype {x.dtype}, X[0] has {dtype}")
        if tuple(x.shape[1:]) != tuple(xs[0].shape[1:]):
            raise ValueError(
                f"X[{i}] has step shape {list(x.shape[1:])}, X[0] has {list(xs[0].shape[1:])}"
            )
    return {"Out": meta((-1,) + tuple(xs[0].shape[1:]), dtype, max(xs[0].lod_level, 1))}


def _infer_slice(ins, attrs):
    for slot in ("Offset", "Length"):
        if ins[slot].dtype not in _INTS:
            raise TypeError(f"{slot} must be int64, given {ins[slot].dtype}")
    return _infer_same("Out")(ins, attrs)


def _infer_enumerate(ins, attrs):
    x = ins["X"]
    if x.dtype not in _INTS:
        raise TypeError(f"X must be int32 or int64 ids, given {x.dtype}")
    return {"Out": meta((-1, attrs["win_size"]), x.dtype, max(x.lod_level, 1))}


def _infer_scatter(ins, attrs):
    x, ids = ins["X"], ins["Ids"]
    if ids.dtype not in _INTS:
        raise TypeError(f"Ids must be int64, given {ids.dtype}")
    check_same_dtype(ins, "X", "Updates")
    return {"Out": x}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "sequence_reshape",
            ["X"],
            ["Out"],
            {"new_dim": Attr(int, check=_positive)},
            infer_shape=_infer_reshape,
            grad=GradSpec(("Out@GRAD", "X"), ("X@GRAD",)),
            doc="re-cut every sequence's data into rows of new_dim",
        )
    )
    registry.register_op(
        OpDef(
            "sequence_reverse",
            ["X"],
            ["Y"],
            infer_shape=_infer_same("Y"),
            grad=GradSpec(("Y@GRAD", "X"), ("X@GRAD",)),
            doc="reverse the rows of every sequence",
        )
    )
    registry.register_op(
        OpDef(
            "sequence_concat",
            ["X*"],
            ["Out"],
            infer_shape=_infer_concat,
            grad=GradSpec(("Out@GRAD", "X"), ("X@GRAD",)),
            doc="sequence i of Out = sequence i of X[0], then of X[1], ...",
        )
    )
    registry.register_op(
        OpDef(
            "sequence_slice",
            ["X", "Offset", "Length"],
            ["Out"],
            infer_shape=_infer_slice,
            kernel_dtype="X",
            grad=GradSpec(("Out@GRAD", "X", "Offset", "Length"), ("X@GRAD",)),
            doc="rows Offset[i] .. Offset[i] + Length[i] of every sequence i",
        )
    )
    registry.register_op(
        OpDef(
            "sequence_enumerate",
            ["X"],
            ["Out"],
            {"win_size": Attr(int, check=_positive), "pad_value": Attr(int, 0)},
            infer_shape=_infer_enumerate,
            doc="every window of win_size ids inside each sequence, padded at its end",
        )
    )
    registry.register_op(
        OpDef(
            "sequence_scatter",
            ["X", "Ids", "Updates"],
            ["Out"],
            infer_shape=_infer_scatter,
            kernel_dtype="X",
            grad=GradSpec(("Out@GRAD", "Ids", "Updates"), ("X@GRAD", "Updates@GRAD")),
            doc="Out = X; Out[i, Ids[j]] += Updates[j] for the ids j of sequence i",
        )
    )
