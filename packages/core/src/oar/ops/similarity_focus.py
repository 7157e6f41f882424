"""``similarity_focus``: for each index along ``axis``, greedily mark the largest entries of
the remaining 2-D slice with distinct rows and columns (min(rows, cols) of them); the
output is 1 at every position of a marked (row, column) across ``axis``, OR-ed over the
indexes. Not differentiable (Fluid defines no gradient)."""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import Attr, OpDef


def _infer(ins, attrs):
    x = ins["X"]
    if len(x.shape) != 4:
        raise ValueError(f"similarity_focus: X must be 4-D, given {list(x.shape)}")
    axis = attrs["axis"]
    if axis not in (1, 2, 3):
        raise ValueError(f"similarity_focus: axis must be 1, 2 or 3, given {axis}")
    idx = attrs["indexes"]
    if not idx or (x.shape[axis] >= 0 and any(not 0 <= i < x.shape[axis] for i in idx)):
        raise ValueError(
            f"similarity_focus: indexes {idx} must be a non-empty list within dim {axis} of X {list(x.shape)}"
        )
    return {"Out": meta(x.shape, x.dtype)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "similarity_focus",
            ["X"],
            ["Out"],
            {"axis": Attr(int, 1), "indexes": Attr(list, [])},
            infer_shape=_infer,
        )
    )
