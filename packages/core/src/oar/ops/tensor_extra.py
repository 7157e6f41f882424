"""Indexing and creation ops of Fluid 1.8's tensor API: flip, index_select, index_sample,
meshgrid, allclose, randperm."""

from __future__ import annotations

from oar.framework.dtypes import convert_dtype
from oar.ops._infer import compatible, meta
from oar.registry import Attr, GradSpec, OpDef

INDEX_DTYPES = ("int32", "int64")


def _infer_flip(ins, attrs):
    x = ins["X"]
    rank = len(x.shape)
    dims = attrs["dims"]
    for d in dims:
        if not -rank <= d < rank:
            raise ValueError(f"dims {dims}: axis {d} is out of range for X of rank {rank}")
    if len({d % rank for d in dims}) != len(dims):
        raise ValueError(f"dims {dims} names an axis twice")
    return {"Out": x}


def _check_index(ins, slot):
    if ins[slot].dtype not in INDEX_DTYPES:
        raise TypeError(f"input '{slot}' must be int32 or int64, given {ins[slot].dtype}")


def _infer_index_select(ins, attrs):
    x, idx = ins["X"], ins["Index"]
    _check_index(ins, "Index")
    rank = len(x.shape)
    dim = attrs["dim"]
    if not -rank <= dim < rank:
        raise ValueError(f"dim {dim} is out of range for X of rank {rank}")
    if len(idx.shape) != 1:
        raise ValueError(f"Index must be 1-D, given shape {list(idx.shape)}")
    out = list(x.shape)
    out[dim % rank] = idx.shape[0]
    return {"Out": meta(out, x.dtype)}


def _infer_index_sample(ins, attrs):
    x, idx = ins["X"], ins["Index"]
    _check_index(ins, "Index")
    if len(x.shape) != 2 or len(idx.shape) != 2 or not compatible(x.shape[0], idx.shape[0]):
        raise ValueError(
            f"X and Index must be 2-D with the same number of rows, given {list(x.shape)} "
            f"and {list(idx.shape)}"
        )
    return {"Out": meta(idx.shape, x.dtype)}


def _infer_meshgrid(ins, attrs):
    xs = ins["X"]
    for i, x in enumerate(xs):
        if len(x.shape) != 1:
            raise ValueError(f"X[{i}] must be 1-D, given shape {list(x.shape)}")
    shape = [x.shape[0] for x in xs]
    return {"Out": [meta(shape, x.dtype) for x in xs]}


def _infer_allclose(ins, attrs):
    a, b = ins["Input"].shape, ins["Other"].shape
    if len(a) != len(b) or not all(map(compatible, a, b)):
        raise ValueError(f"Input {list(a)} and Other {list(b)} must have the same shape")
    return {"Out": meta((1,), "bool")}


def _infer_randperm(ins, attrs):
    if attrs["n"] < 1:
        raise ValueError(f"n must be >= 1, given {attrs['n']}")
    return {"Out": meta((attrs["n"],), convert_dtype(attrs["dtype"]))}


def _dtype_check(v):
    try:
        dt = convert_dtype(v)
    except TypeError as exc:
        return str(exc)
    return None if dt in ("int32", "int64", "float32", "float64") else f"unsupported dtype {dt}"


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "flip",
            ["X"],
            ["Out"],
            {"dims": Attr(list)},
            infer_shape=_infer_flip,
            grad=GradSpec(("Out@GRAD",), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "index_select",
            ["X", "Index"],
            ["Out"],
            {"dim": Attr(int, 0)},
            infer_shape=_infer_index_select,
            grad=GradSpec(("X", "Index", "Out@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "index_sample",
            ["X", "Index"],
            ["Out"],
            {},
            infer_shape=_infer_index_sample,
            grad=GradSpec(("X", "Index", "Out@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "meshgrid",
            ["X*"],
            ["Out*"],
            {},
            infer_shape=_infer_meshgrid,
            grad=GradSpec(("X", "Out@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "allclose",
            ["Input", "Other"],
            ["Out"],
            {"rtol": Attr(float, 1e-5), "atol": Attr(float, 1e-8), "equal_nan": Attr(bool, False)},
            infer_shape=_infer_allclose,
        )
    )
    registry.register_op(
        OpDef(
            "randperm",
            [],
            ["Out"],
            {"n": Attr(int), "dtype": Attr(str, "int64", _dtype_check), "seed": Attr(int, 0)},
            infer_shape=_infer_randperm,
            kernel_dtype="attr:dtype",
        )
    )
