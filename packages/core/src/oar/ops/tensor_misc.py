"""Smaller tensor ops: cos_sim, label_smooth, reverse, roll, multiplex, eye, diag, unique, size,
isfinite/isinf/isnan."""

from __future__ import annotations

from oar.framework.dtypes import convert_dtype
from oar.ops._infer import check_float, check_same_dtype, compatible, dtype_check, meta
from oar.registry import Attr, GradOpDesc, GradSpec, OpDef


def _infer_cos_sim(ins, attrs):
    x, y = ins["X"], ins["Y"]
    check_float(ins, "X")
    check_same_dtype(ins, "X", "Y")
    if len(x.shape) < 2 or len(y.shape) != len(x.shape):
        raise ValueError(
            f"X and Y must have the same rank >= 2, given {list(x.shape)} and {list(y.shape)}"
        )
    if not all(compatible(a, b) for a, b in zip(x.shape[1:], y.shape[1:])):
        raise ValueError(f"X {list(x.shape)} and Y {list(y.shape)} differ after the first dim")
    if y.shape[0] != 1 and not compatible(x.shape[0], y.shape[0]):
        raise ValueError(f"Y must have X's {x.shape[0]} rows or 1 row, given {y.shape[0]}")
    return {
        "Out": meta([x.shape[0], 1], x.dtype, x.lod_level),
        "XNorm": meta([x.shape[0], 1], x.dtype),
        "YNorm": meta([y.shape[0], 1], x.dtype),
    }


def _infer_label_smooth(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    if not 0.0 <= attrs["epsilon"] <= 1.0:
        raise ValueError(f"epsilon must be in [0, 1], given {attrs['epsilon']}")
    p = ins.get("PriorDist")
    if p is not None and p.shape[-1] >= 0 and x.shape[-1] >= 0 and p.shape[-1] != x.shape[-1]:
        raise ValueError(f"PriorDist's last dim {p.shape[-1]} must equal X's {x.shape[-1]}")
    return {"Out": x}


def _check_axes(axes, rank, what="axis"):
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"{what} {list(axes)} holds {a}, out of range for X of rank {rank}")


def _infer_reverse(ins, attrs):
    x = ins["X"]
    if not attrs["axis"]:
        raise ValueError("axis must not be empty")
    _check_axes(attrs["axis"], len(x.shape))
    return {"Out": x}


def _infer_roll(ins, attrs):
    x = ins["X"]
    shifts, dims = attrs["shifts"], attrs["dims"]
    if dims and len(dims) != len(shifts):
        raise ValueError(f"shifts {list(shifts)} and dims {list(dims)} must have the same length")
    if not dims and len(shifts) != 1:
        raise ValueError(
            f"without dims, shifts must hold one value (a flat roll), given {list(shifts)}"
        )
    _check_axes(dims, len(x.shape), "dims")
    return {"Out": x}


def _infer_multiplex(ins, attrs):
    xs, ids = ins["X"], ins["Ids"]
    first = xs[0]
    for i, x in enumerate(xs):
        if (
            x.dtype != first.dtype
            or len(x.shape) != len(first.shape)
            or not all(compatible(a, b) for a, b in zip(x.shape, first.shape))
        ):
            raise ValueError(
                f"X[{i}] ({list(x.shape)}, {x.dtype}) differs from X[0] ({list(first.shape)}, {first.dtype})"
            )
    if ids.dtype not in ("int32", "int64"):
        raise TypeError(f"Ids must be int32, given {ids.dtype}")
    if (
        len(ids.shape) != 2
        or (ids.shape[1] != 1 and ids.shape[1] >= 0)
        or not compatible(ids.shape[0], first.shape[0])
    ):
        raise ValueError(f"Ids must have shape [{first.shape[0]}, 1], given {list(ids.shape)}")
    return {"Out": first}


def _infer_eye(ins, attrs):
    rows, cols = attrs["num_rows"], attrs["num_columns"]
    if rows < 0:
        raise ValueError(f"num_rows must be >= 0, given {rows}")
    return {"Out": meta([rows, rows if cols == -1 else cols], convert_dtype(attrs["dtype"]))}


def _infer_diag(ins, attrs):
    d = ins["Diagonal"]
    if len(d.shape) != 1:
        raise ValueError(f"Diagonal must be 1-D, given shape {list(d.shape)}")
    return {"Out": meta([d.shape[0], d.shape[0]], d.dtype)}


def _infer_unique(ins, attrs):
    x = ins["X"]
    if len(x.shape) != 1:
        raise ValueError(f"X must be 1-D, given shape {list(x.shape)}")
    return {"Out": meta([-1], x.dtype), "Index": meta(x.shape, convert_dtype(attrs["dtype"]))}


def _infer_unique_counts(ins, attrs):
    res = _infer_unique(ins, attrs)
    res["Count"] = meta([-1], convert_dtype(attrs["dtype"]))
    return res


def _infer_shard(ins, attrs):
    x = ins["X"]
    if x.dtype not in ("int32", "int64"):
        raise TypeError(f"X must hold int64 ids, given {x.dtype}")
    if len(x.shape) != 2 or (x.shape[1] != 1 and x.shape[1] >= 0):
        raise ValueError(f"X must have shape [N, 1], given {list(x.shape)}")
    if attrs["index_num"] < 1 or attrs["nshards"] < 1:
        raise ValueError(
            f"index_num and nshards must be >= 1, given {attrs['index_num']} and {attrs['nshards']}"
        )
    if not 0 <= attrs["shard_id"] < attrs["nshards"]:
        raise ValueError(f"shard_id {attrs['shard_id']} must be in [0, nshards={attrs['nshards']})")
    return {"Out": x}


def _infer_check(ins, attrs):
    return {"Out": meta([1], "bool")}


def _grad_reverse(g):
    return [
        GradOpDesc(
            "reverse", {"X": g.output_grad("Out")}, {"Out": g.input_grad("X")}, dict(g.attrs)
        )
    ]


def _grad_roll(g):
    attrs = dict(g.attrs)
    attrs["shifts"] = [-s for s in attrs["shifts"]]
    return [GradOpDesc("roll", {"X": g.output_grad("Out")}, {"Out": g.input_grad("X")}, attrs)]


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "cos_sim",
            ["X", "Y"],
            ["Out", "XNorm", "YNorm"],
            {},
            infer_shape=_infer_cos_sim,
            grad=GradSpec(("X", "Y", "Out", "XNorm", "YNorm", "Out@GRAD"), ("X@GRAD", "Y@GRAD")),
        )
    )
    registry.register_op(
        OpDef(
            "label_smooth",
            ["X", "PriorDist?"],
            ["Out"],
            {"epsilon": Attr(float, 0.0)},
            infer_shape=_infer_label_smooth,
            grad=GradSpec(("Out@GRAD",), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "reverse",
            ["X"],
            ["Out"],
            {"axis": Attr(list)},
            infer_shape=_infer_reverse,
            grad=_grad_reverse,
        )
    )
    registry.register_op(
        OpDef(
            "roll",
            ["X"],
            ["Out"],
            {"shifts": Attr(list), "dims": Attr(list, [])},
            infer_shape=_infer_roll,
            grad=_grad_roll,
        )
    )
    registry.register_op(
        OpDef(
            "multiplex",
            ["X*", "Ids"],
            ["Out"],
            {},
            infer_shape=_infer_multiplex,
            grad=GradSpec(("X", "Ids", "Out@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "eye",
            [],
            ["Out"],
            {
                "num_rows": Attr(int),
                "num_columns": Attr(int, -1),
                "dtype": Attr(str, "float32", dtype_check),
            },
            infer_shape=_infer_eye,
            kernel_dtype="attr:dtype",
        )
    )
    registry.register_op(OpDef("diag", ["Diagonal"], ["Out"], {}, infer_shape=_infer_diag))
    registry.register_op(
        OpDef(
            "unique",
            ["X"],
            ["Out", "Index"],
            {"dtype": Attr(str, "int32", dtype_check)},
            infer_shape=_infer_unique,
        )
    )
    registry.register_op(
        OpDef(
            "unique_with_counts",
            ["X"],
            ["Out", "Index", "Count"],
            {"dtype": Attr(str, "int32", dtype_check)},
            infer_shape=_infer_unique_counts,
        )
    )
    registry.register_op(
        OpDef(
            "shard_index",
            ["X"],
            ["Out"],
            {
                "index_num": Attr(int),
                "nshards": Attr(int),
                "shard_id": Attr(int),
                "ignore_value": Attr(int, -1),
            },
            infer_shape=_infer_shard,
        )
    )
    registry.register_op(
        OpDef(
            "size", ["Input"], ["Out"], {}, infer_shape=lambda ins, a: {"Out": meta([1], "int64")}
        )
    )
    for name in ("isfinite", "isinf", "isnan"):
        registry.register_op(OpDef(name, ["X"], ["Out"], {}, infer_shape=_infer_check))
