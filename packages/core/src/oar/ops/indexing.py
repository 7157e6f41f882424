"""Indexing ops: slice, strided_slice, gather, gather_nd, scatter, pad, pad2d.

Fluid's slice rules: negative starts/ends count from the end, then both are
clamped to [0, dim]; ``decrease_axis`` drops size-1 sliced dims.
"""

from __future__ import annotations

from oar.ops._infer import check_same_dtype, compatible, meta, one_of
from oar.registry import Attr, GradSpec, OpDef

_INT = ("int32", "int64")


def _check_axes(attrs, rank, with_strides=False) -> None:
    axes, starts, ends = attrs["axes"], attrs["starts"], attrs["ends"]
    n = len(axes)
    lists = {"starts": starts, "ends": ends}
    if with_strides:
        lists["strides"] = attrs["strides"]
    for k, v in lists.items():
        if v and len(v) != n:
            raise ValueError(f"{k} {list(v)} must have one entry per axis in axes {list(axes)}")
    for a in axes:
        if not 0 <= a < rank:
            raise ValueError(f"axes {list(axes)}: {a} is out of range for Input of rank {rank}")
    if with_strides and any(s == 0 for s in attrs["strides"]):
        raise ValueError(f"strides must not be 0, given {list(attrs['strides'])}")


def slice_bounds(dim: int, start: int, end: int) -> tuple:
    """Fluid's slice rule for one axis of size ``dim`` -> (start, end) in [0, dim]."""
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    start = min(max(start, 0), dim)
    end = min(max(end, 0), dim)
    return start, max(end, start)


def strided_bounds(start: int, end: int, stride: int) -> slice:
    """Python slice rules, plus Fluid's: with a negative stride, ``end == -1`` runs to the first element."""
    if stride < 0 and end == -1:
        return slice(start, None, stride)
    return slice(start, end, stride)


def _decrease(shape, attrs):
    dec = attrs["decrease_axis"]
    for a in dec:
        if shape[a] != 1 and shape[a] >= 0:
            raise ValueError(
                f"decrease_axis {list(dec)}: sliced dim {a} has size {shape[a]}, not 1"
            )
    out = [d for i, d in enumerate(shape) if i not in dec]
    return out or [1]


def _infer_slice(ins, attrs):
    x = ins["Input"]
    _check_axes(attrs, len(x.shape))
    tensors = any(
        ins.get(s) for s in ("StartsTensor", "EndsTensor", "StartsTensorList", "EndsTensorList")
    )
    shape = list(x.shape)
    for i, a in enumerate(attrs["axes"]):
        if tensors or shape[a] < 0 or attrs["starts"][i] == -1 and ins.get("StartsTensorList"):
            shape[a] = -1
            continue
        s, e = slice_bounds(shape[a], attrs["starts"][i], attrs["ends"][i])
        shape[a] = e - s
    return {"Out": meta(_decrease(shape, attrs), x.dtype, x.lod_level)}


def _infer_strided(ins, attrs):
    x = ins["Input"]
    _check_axes(attrs, len(x.shape), True)
    shape = list(x.shape)
    tensors = any(
        ins.get(s)
        for s in (
            "StartsTensor",
            "EndsTensor",
            "StridesTensor",
            "StartsTensorList",
            "EndsTensorList",
            "StridesTensorList",
        )
    )
    for i, a in enumerate(attrs["axes"]):
        if tensors or shape[a] < 0:
            shape[a] = -1
            continue
        sl = strided_bounds(attrs["starts"][i], attrs["ends"][i], attrs["strides"][i])
        shape[a] = len(range(*sl.indices(shape[a])))
        if shape[a] == 0:
            raise ValueError(
                f"start {sl.start} and end {attrs['ends'][i]} select nothing with stride {sl.step} "
                f"on axis {a} of size {x.shape[a]}"
            )
    return {"Out": meta(_decrease(shape, attrs), x.dtype, x.lod_level)}


def _infer_gather(ins, attrs):
    x, idx = ins["X"], ins["Index"]
    if idx.dtype not in _INT:
        raise TypeError(f"Index must be int32 or int64, given {idx.dtype}")
    if len(idx.shape) == 2 and idx.shape[1] != 1 or len(idx.shape) > 2:
        raise ValueError(f"Index must be 1-D (or [N, 1]), given shape {list(idx.shape)}")
    if not x.shape:
        raise ValueError("X must have rank >= 1")
    return {"Out": meta((idx.shape[0],) + tuple(x.shape[1:]), x.dtype)}


def _infer_gather_nd(ins, attrs):
    x, idx = ins["X"], ins["Index"]
    if idx.dtype not in _INT:
        raise TypeError(f"Index must be int32 or int64, given {idx.dtype}")
    k = idx.shape[-1] if idx.shape else 0
    if k < 0:
        raise ValueError(f"Index's last dim must be known, given shape {list(idx.shape)}")
    if k > len(x.shape):
        raise ValueError(f"Index's last dim {k} exceeds X's rank {len(x.shape)}")
    shape = tuple(idx.shape[:-1]) + tuple(x.shape[k:])
    return {"Out": meta(shape or (1,), x.dtype)}


def _infer_scatter(ins, attrs):
    x, ids, up = ins["X"], ins["Ids"], ins["Updates"]
    check_same_dtype(ins, "X", "Updates")
    if ids.dtype not in _INT:
        raise TypeError(f"Ids must be int32 or int64, given {ids.dtype}")
    if len(ids.shape) != 1 and not (len(ids.shape) == 2 and ids.shape[1] == 1):
        raise ValueError(f"Ids must be 1-D, given shape {list(ids.shape)}")
    if len(up.shape) != len(x.shape) or not all(
        compatible(a, b) for a, b in zip(up.shape[1:], x.shape[1:])
    ):
        raise ValueError(
            f"Updates shape {list(up.shape)} must be [len(Ids)] + X.shape[1:] for X {list(x.shape)}"
        )
    if not compatible(up.shape[0], ids.shape[0]):
        raise ValueError(f"Updates has {up.shape[0]} rows but Ids has {ids.shape[0]} entries")
    return {"Out": x}


def _infer_pad(ins, attrs):
    x = ins["X"]
    p = attrs["paddings"]
    if len(p) != 2 * len(x.shape):
        raise ValueError(f"paddings {list(p)} must have 2 entries per dim of X {list(x.shape)}")
    if any(v < 0 for v in p):
        raise ValueError(f"paddings must be >= 0, given {list(p)}")
    shape = [d + p[2 * i] + p[2 * i + 1] if d >= 0 else -1 for i, d in enumerate(x.shape)]
    return {"Out": meta(shape, x.dtype, x.lod_level)}


def _infer_pad2d(ins, attrs):
    x = ins["X"]
    if len(x.shape) != 4:
        raise ValueError(f"X must be 4-D ({attrs['data_format']}), given shape {list(x.shape)}")
    shape = list(x.shape)
    if ins.get("Paddings") is not None:
        h, w = (2, 3) if attrs["data_format"] == "NCHW" else (1, 2)
        shape[h] = shape[w] = -1
        return {"Out": meta(shape, x.dtype)}
    p = attrs["paddings"]
    if len(p) != 4 or any(v < 0 for v in p):
        raise ValueError(
            f"paddings must be 4 non-negative ints [top, bottom, left, right], given {list(p)}"
        )
    h, w = (2, 3) if attrs["data_format"] == "NCHW" else (1, 2)
    if attrs["mode"] == "reflect":
        for ax, (a, b) in ((h, p[:2]), (w, p[2:])):
            if shape[ax] >= 0 and max(a, b) >= shape[ax]:
                raise ValueError(
                    f"reflect padding {max(a, b)} must be smaller than the padded dim ({shape[ax]})"
                )
    shape[h] = shape[h] + p[0] + p[1] if shape[h] >= 0 else -1
    shape[w] = shape[w] + p[2] + p[3] if shape[w] >= 0 else -1
    return {"Out": meta(shape, x.dtype)}


def _slice_attrs(strided=False) -> dict:
    a = {
        "axes": Attr(list),
        "starts": Attr(list, []),
        "ends": Attr(list, []),
        "infer_flags": Attr(list, []),
        "decrease_axis": Attr(list, []),
    }
    if strided:
        a["strides"] = Attr(list, [])
    return a


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "slice",
            ["Input", "StartsTensor?", "EndsTensor?", "StartsTensorList*?", "EndsTensorList*?"],
            ["Out"],
            _slice_attrs(),
            infer_shape=_infer_slice,
            kernel_dtype="Input",
            grad=GradSpec(
                (
                    "Input",
                    "StartsTensor",
                    "EndsTensor",
                    "StartsTensorList",
                    "EndsTensorList",
                    "Out@GRAD",
                ),
                ("Input@GRAD",),
            ),
        )
    )
    registry.register_op(
        OpDef(
            "strided_slice",
            [
                "Input",
                "StartsTensor?",
                "EndsTensor?",
                "StridesTensor?",
                "StartsTensorList*?",
                "EndsTensorList*?",
                "StridesTensorList*?",
            ],
            ["Out"],
            _slice_attrs(True),
            infer_shape=_infer_strided,
            kernel_dtype="Input",
            grad=GradSpec(
                (
                    "Input",
                    "StartsTensor",
                    "EndsTensor",
                    "StridesTensor",
                    "StartsTensorList",
                    "EndsTensorList",
                    "StridesTensorList",
                    "Out@GRAD",
                ),
                ("Input@GRAD",),
            ),
        )
    )
    registry.register_op(
        OpDef(
            "gather",
            ["X", "Index"],
            ["Out"],
            {"overwrite": Attr(bool, True)},
            infer_shape=_infer_gather,
            grad=GradSpec(("X", "Index", "Out@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "gather_nd",
            ["X", "Index"],
            ["Out"],
            {},
            infer_shape=_infer_gather_nd,
            grad=GradSpec(("X", "Index", "Out@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "scatter",
            ["X", "Ids", "Updates"],
            ["Out"],
            {"overwrite": Attr(bool, True)},
            infer_shape=_infer_scatter,
            grad=GradSpec(("Updates", "Ids", "Out@GRAD"), ("X@GRAD", "Updates@GRAD")),
        )
    )
    registry.register_op(
        OpDef(
            "pad",
            ["X"],
            ["Out"],
            {"paddings": Attr(list), "pad_value": Attr(float, 0.0)},
            infer_shape=_infer_pad,
            grad=GradSpec(("X", "Out@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "pad2d",
            ["X", "Paddings?"],
            ["Out"],
            {
                "paddings": Attr(list, [0, 0, 0, 0]),
                "mode": Attr(str, "constant", one_of("constant", "reflect", "edge")),
                "pad_value": Attr(float, 0.0),
                "data_format": Attr(str, "NCHW", one_of("NCHW", "NHWC")),
            },
            infer_shape=_infer_pad2d,
            grad=GradSpec(("X", "Paddings", "Out@GRAD"), ("X@GRAD",)),
        )
    )
