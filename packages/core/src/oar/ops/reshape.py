"""reshape2: a view with a new shape (0 copies a dim, -1 is inferred)."""

from __future__ import annotations

from oar.ops._infer import meta, numel
from oar.registry import Attr, GradSpec, OpDef


def resolve_shape(in_shape, shape) -> list:
    """Apply Fluid's reshape rules: 0 copies the input dim, one -1 is inferred."""
    out = []
    for i, d in enumerate(shape):
        if d < -1:
            raise ValueError(
                f"shape {list(shape)} holds {d} at dim {i}; each entry must be a positive size, "
                f"0 (copy X's dim) or one -1 (inferred)"
            )
        if d == 0:
            if i >= len(in_shape):
                raise ValueError(
                    f"shape {list(shape)} has 0 at dim {i} but X has rank {len(in_shape)}"
                )
            out.append(in_shape[i])
        else:
            out.append(d)
    if sum(1 for d in shape if d == -1) > 1:
        raise ValueError(f"shape {list(shape)} has more than one -1")
    total = numel(in_shape)
    known = numel([d for d in out if d != -1])
    if -1 in out:
        if total >= 0 and known > 0:
            if total % known:
                raise ValueError(
                    f"cannot reshape X of shape {list(in_shape)} ({total} elements) to {list(shape)}"
                )
            out[out.index(-1)] = total // known
    elif total >= 0 and known >= 0 and total != known:
        raise ValueError(
            f"cannot reshape X of shape {list(in_shape)} ({total} elements) to {list(shape)} ({known})"
        )
    return out


def _infer(ins, attrs):
    x = ins["X"]
    if ins.get("Shape") is not None or ins.get("ShapeTensor"):
        n = ins["Shape"].shape[0] if ins.get("Shape") is not None else len(ins["ShapeTensor"])
        out = [-1] * n
    else:
        if not attrs["shape"]:
            raise ValueError("shape must not be empty")
        out = resolve_shape(list(x.shape), attrs["shape"])
    return {"Out": meta(out, x.dtype, x.lod_level), "XShape": meta((0,) + tuple(x.shape), x.dtype)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "reshape2",
            ["X", "Shape?", "ShapeTensor*?"],
            ["Out", "XShape?"],
            {"shape": Attr(list, [])},
            infer_shape=_infer,
            grad=GradSpec(("XShape", "Out@GRAD"), ("X@GRAD",)),
            share_lod=(("X", "Out"),),
        )
    )
