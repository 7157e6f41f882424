"""``shuffle_batch`` (``fluid.contrib.shuffle_batch``): the rows of ``X`` (all axes but the last
flattened) in a random order, a new order each run.

``Seed`` (optional, one int64) seeds the order and ``SeedOut`` holds the next seed, so a
persistable seed variable fed back gives a reproducible sequence of orders; without a
seed value (0) the order is drawn from the shared generator. The gradient puts each row's
gradient back at its original position (``ShuffleIdx``).
"""

from __future__ import annotations

from oar.ops._infer import meta, numel
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    x = ins["X"]
    if len(x.shape) < 2:
        raise ValueError(f"X must have rank >= 2 (rows x features), given shape {list(x.shape)}")
    rows = -1 if any(d < 0 for d in x.shape[:-1]) else numel(x.shape[:-1])
    return {"Out": x, "ShuffleIdx": meta([rows], "int64"), "SeedOut": meta([1], "int64")}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "shuffle_batch",
            ["X", "Seed?"],
            ["Out", "ShuffleIdx", "SeedOut"],
            {"startup_seed": Attr(int, 0)},
            infer_shape=_infer,
            kernel_dtype="X",
            grad=GradSpec(("ShuffleIdx", "Out@GRAD"), ("X@GRAD",)),
        )
    )
