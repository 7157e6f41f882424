"""Search and scan ops: arg_max, arg_min, argsort, where_index, cumsum."""

from __future__ import annotations

from oar.framework.dtypes import convert_dtype
from oar.ops._infer import meta
from oar.registry import Attr, GradOpDesc, GradSpec, OpDef


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ValueError(
            f"axis {axis} is out of range for X of rank {rank} (want [-{rank}, {rank}))"
        )
    return axis % max(rank, 1)


def _arg_dtype(v) -> str:
    return "int64" if v in (-1, None) else convert_dtype(v)


def _check_arg_dtype(v):
    if v in (-1, None):
        return None
    try:
        name = convert_dtype(v)
    except TypeError as exc:
        return str(exc)
    return None if name in ("int32", "int64") else "must be int32 or int64"


def _infer_arg(ins, attrs):
    x = ins["X"]
    axis = _axis(attrs["axis"], len(x.shape))
    if attrs["keepdims"]:
        shape = [1 if i == axis else d for i, d in enumerate(x.shape)]
    else:
        shape = [d for i, d in enumerate(x.shape) if i != axis] or [1]
    return {"Out": meta(shape, _arg_dtype(attrs["dtype"]))}


def _infer_argsort(ins, attrs):
    x = ins["X"]
    _axis(attrs["axis"], len(x.shape))
    return {"Out": x, "Indices": meta(x.shape, "int64", x.lod_level)}


def _infer_where(ins, attrs):
    c = ins["Condition"]
    return {"Out": meta([-1, len(c.shape)], "int64")}


def _infer_cumsum(ins, attrs):
    x = ins["X"]
    _axis(attrs["axis"], len(x.shape))
    return {"Out": x}


def _grad_cumsum(g):
    """The gradient of a cumsum is the cumsum of the output gradient run the other way."""
    attrs = dict(g.attrs)
    attrs["reverse"] = not attrs["reverse"]
    return [GradOpDesc("cumsum", {"X": g.output_grad("Out")}, {"Out": g.input_grad("X")}, attrs)]


def register(registry) -> None:
    for name in ("arg_max", "arg_min"):
        registry.register_op(
            OpDef(
                name,
                ["X"],
                ["Out"],
                {
                    "axis": Attr(int, 0),
                    "keepdims": Attr(bool, False),
                    "dtype": Attr(None, -1, _check_arg_dtype),
                },
                infer_shape=_infer_arg,
            )
        )
    registry.register_op(
        OpDef(
            "argsort",
            ["X"],
            ["Out", "Indices"],
            {"axis": Attr(int, -1), "descending": Attr(bool, False)},
            infer_shape=_infer_argsort,
            grad=GradSpec(("X", "Indices", "Out@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(OpDef("where_index", ["Condition"], ["Out"], {}, infer_shape=_infer_where))
    registry.register_op(
        OpDef(
            "cumsum",
            ["X"],
            ["Out"],
            {"axis": Attr(int, -1), "exclusive": Attr(bool, False), "reverse": Attr(bool, False)},
            infer_shape=_infer_cumsum,
            grad=_grad_cumsum,
        )
    )
