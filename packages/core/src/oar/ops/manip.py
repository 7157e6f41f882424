"""Shape manipulation: concat, split, stack, unstack, transpose2, squeeze2, unsqueeze2, flatten2,
expand, expand_as.

The ``*2`` ops write an ``XShape`` output (shape ``[0] + X.shape``, no data) that
their gradients read instead of X, as in Fluid.
"""

from __future__ import annotations

from oar.ops._infer import compatible, meta, numel
from oar.registry import Attr, GradOpDesc, GradSpec, OpDef


def _axis(axis: int, rank: int, what: str = "X") -> int:
    if not -rank <= axis < rank:
        raise ValueError(
            f"axis {axis} is out of range for {what} of rank {rank} (want [-{rank}, {rank}))"
        )
    return axis % rank


def _xshape(x):
    return meta((0,) + tuple(x.shape), x.dtype)


def _infer_concat(ins, attrs):
    xs = ins["X"]
    first = xs[0]
    rank = len(first.shape)
    if ins.get("AxisTensor") is not None:  # the axis is known only at run time
        return {"Out": meta([-1] * rank, first.dtype, first.lod_level)}
    axis = _axis(attrs["axis"], rank, "X[0]")
    total = 0
    for i, x in enumerate(xs):
        if x.dtype != first.dtype:
            raise TypeError(f"X[{i}] has dtype {x.dtype} but X[0] has {first.dtype}")
        if len(x.shape) != rank:
            raise ValueError(f"X[{i}] has rank {len(x.shape)} but X[0] has rank {rank}")
        for d, (a, b) in enumerate(zip(x.shape, first.shape)):
            if d != axis and not compatible(a, b):
                raise ValueError(
                    f"X[{i}] shape {list(x.shape)} and X[0] shape {list(first.shape)} differ at dim {d} "
                    f"(only the concat axis {axis} may differ)"
                )
        total = -1 if total < 0 or x.shape[axis] < 0 else total + x.shape[axis]
    shape = list(first.shape)
    shape[axis] = total
    return {"Out": meta(shape, first.dtype, first.lod_level)}


def split_sizes(dim: int, num: int, sections: list) -> list:
    """Section sizes for splitting a dim of size ``dim`` (one -1 section is inferred)."""
    if sections:
        if sum(1 for s in sections if s == -1) > 1:
            raise ValueError(f"sections {sections} has more than one -1")
        if any(s == 0 or s < -1 for s in sections):
            raise ValueError(f"sections must be positive (or one -1), given {sections}")
        if dim < 0:
            return list(sections)
        known = sum(s for s in sections if s != -1)
        if -1 in sections:
            if known >= dim:
                raise ValueError(f"sections {sections} leave nothing for -1 in a dim of size {dim}")
            return [dim - known if s == -1 else s for s in sections]
        if known != dim:
            raise ValueError(f"sections {sections} sum to {known} but the split dim has size {dim}")
        return list(sections)
    if num < 1:
        raise ValueError(f"num must be >= 1 when sections are not given, given {num}")
    if dim >= 0 and dim % num:
        raise ValueError(f"a dim of size {dim} cannot be split into {num} equal parts")
    return [dim // num if dim >= 0 else -1] * num


def _infer_split(ins, attrs):
    x = ins["X"]
    n = attrs["num"] or len(attrs["sections"])
    if ins.get("AxisTensor") is not None:
        return {"Out": [meta([-1] * len(x.shape), x.dtype, x.lod_level)] * n}
    axis = _axis(attrs["axis"], len(x.shape))
    if ins.get("SectionsTensorList"):
        sizes = [-1] * n
    else:
        sizes = split_sizes(x.shape[axis], attrs["num"], attrs["sections"])
    outs = []
    for s in sizes:
        shape = list(x.shape)
        shape[axis] = s
        outs.append(meta(shape, x.dtype, x.lod_level))
    return {"Out": outs}


def _grad_split(g):
    return [
        GradOpDesc(
            "concat",
            {"X": g.output_grad("Out")},
            {"Out": g.input_grad("X")},
            {"axis": g.attrs["axis"]},
        )
    ]


def _infer_stack(ins, attrs):
    xs = ins["X"]
    first = xs[0]
    for i, x in enumerate(xs):
        if x.dtype != first.dtype:
            raise TypeError(f"X[{i}] has dtype {x.dtype} but X[0] has {first.dtype}")
        if len(x.shape) != len(first.shape) or not all(
            compatible(a, b) for a, b in zip(x.shape, first.shape)
        ):
            raise ValueError(
                f"X[{i}] has shape {list(x.shape)} but X[0] has {list(first.shape)}; stack needs equal shapes"
            )
    rank = len(first.shape) + 1
    axis = _axis(attrs["axis"], rank, "the stacked result")
    shape = list(first.shape)
    shape.insert(axis, len(xs))
    return {"Y": meta(shape, first.dtype)}


def _infer_unstack(ins, attrs):
    x = ins["X"]
    axis = _axis(attrs["axis"], len(x.shape))
    n = x.shape[axis]
    if n >= 0 and attrs["num"] != n:
        raise ValueError(f"num={attrs['num']} but X's dim {axis} has size {n}")
    shape = [d for i, d in enumerate(x.shape) if i != axis]
    return {"Y": [meta(shape, x.dtype)] * attrs["num"]}


def _infer_transpose(ins, attrs):
    x = ins["X"]
    perm = attrs["axis"]
    rank = len(x.shape)
    if sorted(p % rank if -rank <= p < rank else p for p in perm) != list(range(rank)):
        raise ValueError(
            f"axis {list(perm)} is not a permutation of the {rank} dims of X {list(x.shape)}"
        )
    return {"Out": meta([x.shape[p] for p in perm], x.dtype, x.lod_level), "XShape": _xshape(x)}


def squeeze_shape(shape, axes) -> list:
    rank = len(shape)
    if not axes:
        return [d for d in shape if d != 1]
    drop = set()
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"axes {list(axes)}: {a} is out of range for X of rank {rank}")
        a %= rank
        if shape[a] != 1 and shape[a] >= 0:
            raise ValueError(
                f"cannot squeeze dim {a} of X {list(shape)}: its size is {shape[a]}, not 1"
            )
        drop.add(a)
    return [d for i, d in enumerate(shape) if i not in drop]


def unsqueeze_shape(shape, axes) -> list:
    out = list(shape)
    for a in axes:
        rank = len(out) + 1
        if not -rank <= a < rank:
            raise ValueError(
                f"axes {list(axes)}: {a} is out of range for inserting into rank {len(out)}"
            )
        out.insert(a % rank, 1)
    return out


def _infer_squeeze(ins, attrs):
    x = ins["X"]
    return {
        "Out": meta(squeeze_shape(list(x.shape), attrs["axes"]), x.dtype, x.lod_level),
        "XShape": _xshape(x),
    }


def _infer_unsqueeze(ins, attrs):
    x = ins["X"]
    if ins.get("AxesTensor") is not None or ins.get("AxesTensorList"):
        return {"XShape": _xshape(x)}
    if not attrs["axes"]:
        raise ValueError("axes must not be empty")
    return {
        "Out": meta(unsqueeze_shape(list(x.shape), attrs["axes"]), x.dtype, x.lod_level),
        "XShape": _xshape(x),
    }


def _infer_flatten(ins, attrs):
    x = ins["X"]
    axis = attrs["axis"]
    if not 0 <= axis <= len(x.shape):
        raise ValueError(
            f"axis {axis} must be in [0, {len(x.shape)}] for X of shape {list(x.shape)}"
        )
    shape = [numel(x.shape[:axis]), numel(x.shape[axis:])]
    return {"Out": meta(shape, x.dtype, x.lod_level), "XShape": _xshape(x)}


def _infer_expand(ins, attrs):
    x = ins["X"]
    if ins.get("ExpandTimes") is not None or ins.get("expand_times_tensor"):
        return {"Out": meta([-1] * len(x.shape), x.dtype, x.lod_level)}
    times = attrs["expand_times"]
    if len(times) != len(x.shape):
        raise ValueError(
            f"expand_times {list(times)} must have one entry per dim of X {list(x.shape)}"
        )
    if any(t < 1 and t != -1 for t in times):
        raise ValueError(f"expand_times must be positive, given {list(times)}")
    shape = [-1 if d < 0 or t < 0 else d * t for d, t in zip(x.shape, times)]
    return {"Out": meta(shape, x.dtype, x.lod_level)}


def _infer_expand_as(ins, attrs):
    x, t = ins["X"], ins["target_tensor"]
    if len(x.shape) != len(t.shape):
        raise ValueError(f"target_tensor rank {len(t.shape)} must equal X's rank {len(x.shape)}")
    for i, (a, b) in enumerate(zip(x.shape, t.shape)):
        if a > 0 and b >= 0 and b % a:
            raise ValueError(
                f"target_tensor dim {i} ({b}) is not a multiple of X's ({a}); X {list(x.shape)}, "
                f"target {list(t.shape)}"
            )
    return {"Out": meta(t.shape, x.dtype, x.lod_level)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "concat",
            ["X*", "AxisTensor?"],
            ["Out"],
            {"axis": Attr(int, 0), "use_quantizer": Attr(bool, False)},
            infer_shape=_infer_concat,
            grad=GradSpec(("X", "Out@GRAD"), ("X@GRAD",)),
            share_lod=(("X", "Out"),),
        )
    )
    registry.register_op(
        OpDef(
            "split",
            ["X", "AxisTensor?", "SectionsTensorList*?"],
            ["Out*"],
            {"axis": Attr(int, 0), "num": Attr(int, 0), "sections": Attr(list, [])},
            infer_shape=_infer_split,
            grad=_grad_split,
        )
    )
    registry.register_op(
        OpDef(
            "stack",
            ["X*"],
            ["Y"],
            {"axis": Attr(int, 0)},
            infer_shape=_infer_stack,
            grad=GradSpec(("Y@GRAD",), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "unstack",
            ["X"],
            ["Y*"],
            {"axis": Attr(int, 0), "num": Attr(int)},
            infer_shape=_infer_unstack,
            grad=GradSpec(("Y@GRAD",), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "transpose2",
            ["X"],
            ["Out", "XShape?"],
            {
                "axis": Attr(list),
                "data_format": Attr(str, "AnyLayout"),
                "use_quantizer": Attr(bool, False),
            },
            infer_shape=_infer_transpose,
            grad=GradSpec(("XShape", "Out@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "squeeze2",
            ["X"],
            ["Out", "XShape?"],
            {"axes": Attr(list, [])},
            infer_shape=_infer_squeeze,
            grad=GradSpec(("XShape", "Out@GRAD"), ("X@GRAD",)),
            share_lod=(("X", "Out"),),
        )
    )
    registry.register_op(
        OpDef(
            "unsqueeze2",
            ["X", "AxesTensor?", "AxesTensorList*?"],
            ["Out", "XShape?"],
            {"axes": Attr(list, [])},
            infer_shape=_infer_unsqueeze,
            grad=GradSpec(("XShape", "Out@GRAD"), ("X@GRAD",)),
            share_lod=(("X", "Out"),),
        )
    )
    registry.register_op(
        OpDef(
            "flatten2",
            ["X"],
            ["Out", "XShape?"],
            {"axis": Attr(int, 1)},
            infer_shape=_infer_flatten,
            grad=GradSpec(("XShape", "Out@GRAD"), ("X@GRAD",)),
            share_lod=(("X", "Out"),),
        )
    )
    registry.register_op(
        OpDef(
            "expand",
            ["X", "ExpandTimes?", "expand_times_tensor*?"],
            ["Out"],
            {"expand_times": Attr(list, [])},
            infer_shape=_infer_expand,
            grad=GradSpec(("X", "Out@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "expand_as",
            ["X", "target_tensor"],
            ["Out"],
            {},
            infer_shape=_infer_expand_as,
            grad=GradSpec(("X", "Out@GRAD"), ("X@GRAD",)),
        )
    )
