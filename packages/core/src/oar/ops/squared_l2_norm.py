"""``squared_l2_norm``: Out = sum(X*X), the piece GradientClipByGlobalNorm sums over gradients."""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import GradSpec, OpDef


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "squared_l2_norm",
            ["X"],
            ["Out"],
            {},
            infer_shape=lambda ins, a: {"Out": meta([1], ins["X"].dtype)},
            grad=GradSpec(("X", "Out@GRAD"), ("X@GRAD",)),
            doc="Out = sum(X*X)",
        )
    )
