"""Reductions over dims: reduce_sum/mean/max/min/prod (differentiable) and reduce_all/any (bool).

``dim`` lists the dims (negative counts from the end); ``reduce_all`` reduces
every dim; without ``keep_dim`` the reduced dims are dropped (a full reduction
gives shape [1], as in Fluid).
"""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import Attr, GradSpec, OpDef

DIFFERENTIABLE = ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod")
BOOLEAN = ("reduce_all", "reduce_any")


def reduced_dims(shape, attrs) -> list:
    """The reduced dims, normalised to [0, rank); raises ValueError for out-of-range dims."""
    rank = len(shape)
    if attrs["reduce_all"]:
        return list(range(rank))
    dims = attrs["dim"]
    out = []
    for d in dims:
        if not -rank <= d < max(rank, 1):
            raise ValueError(
                f"dim {d} is out of range for X of rank {rank} (want [-{rank}, {rank}))"
            )
        d = d % rank if rank else 0
        if d in out:
            raise ValueError(f"dim {list(dims)} names dim {d} twice")
        out.append(d)
    return sorted(out)


def _infer(ins, attrs, boolean=False):
    x = ins["X"]
    if boolean and x.dtype != "bool":
        raise TypeError(f"X must be a bool tensor, given {x.dtype}")
    dims = reduced_dims(x.shape, attrs)
    if attrs["keep_dim"]:
        shape = [1 if i in dims else d for i, d in enumerate(x.shape)]
    else:
        shape = [d for i, d in enumerate(x.shape) if i not in dims] or [1]
    return {"Out": meta(shape, x.dtype)}


def _attrs() -> dict:
    return {
        "dim": Attr(list, [0]),
        "keep_dim": Attr(bool, False),
        "reduce_all": Attr(bool, False),
        "in_dtype": Attr(int, -1),
        "out_dtype": Attr(int, -1),
    }


def register(registry) -> None:
    for name in DIFFERENTIABLE:
        reads = (
            ("X", "Out@GRAD") if name in ("reduce_sum", "reduce_mean") else ("X", "Out", "Out@GRAD")
        )
        registry.register_op(
            OpDef(
                name,
                ["X"],
                ["Out"],
                _attrs(),
                infer_shape=_infer,
                grad=GradSpec(reads, ("X@GRAD",)),
            )
        )
    for name in BOOLEAN:
        registry.register_op(
            OpDef(name, ["X"], ["Out"], _attrs(), infer_shape=lambda ins, a: _infer(ins, a, True))
        )
