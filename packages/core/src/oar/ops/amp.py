"""Mixed-precision training ops: ``check_finite_and_unscale`` and ``update_loss_scaling``.

``check_finite_and_unscale`` divides every gradient by the loss scale and sets
``FoundInfinite`` when any of them holds Inf or NaN (the gradients are then all
zero, so the step changes nothing but the optimizer's state, as Fluid's AMP).
``update_loss_scaling`` is dynamic loss scaling: after ``incr_every_n_steps``
finite steps in a row the scale grows by ``incr_ratio``; after
``decr_every_n_nan_or_inf`` overflowing steps it shrinks by ``decr_ratio``
(never below 1). Neither op has a gradient.
"""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import Attr, OpDef


def _infer_unscale(ins, attrs):
    xs = ins["X"]
    return {"Out": list(xs), "FoundInfinite": meta([1], "bool")}


def _infer_update(ins, attrs):
    return {
        "LossScaling": ins["PrevLossScaling"],
        "OutGoodSteps": ins["InGoodSteps"],
        "OutBadSteps": ins["InBadSteps"],
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "check_finite_and_unscale",
            ["X*", "Scale"],
            ["Out*", "FoundInfinite"],
            {},
            infer_shape=_infer_unscale,
            kernel_dtype="Scale",
        )
    )
    registry.register_op(
        OpDef(
            "update_loss_scaling",
            ["FoundInfinite", "PrevLossScaling", "InGoodSteps", "InBadSteps"],
            ["LossScaling", "OutGoodSteps", "OutBadSteps"],
            {
                "incr_every_n_steps": Attr(int, 1000),
                "decr_every_n_nan_or_inf": Attr(int, 2),
                "incr_ratio": Attr(float, 2.0),
                "decr_ratio": Attr(float, 0.8),
            },
            infer_shape=_infer_update,
            kernel_dtype="PrevLossScaling",
        )
    )
