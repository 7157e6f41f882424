"""``increment``: Out = X + step on a one-element tensor (the LR schedules' global step counter).

Fluid's ``autoincreased_step_counter`` prepends it to the main program with
``Out`` naming ``X``, so the persistable counter advances once per ``exe.run``.
"""

from __future__ import annotations

from oar.ops._infer import numel
from oar.registry import Attr, OpDef


def _infer_increment(ins, attrs):
    n = numel(ins["X"].shape)
    if n not in (-1, 1):
        raise ValueError(f"X must hold exactly one element, given shape {list(ins['X'].shape)}")
    return {"Out": ins["X"]}


def register(registry) -> None:
    registry.register_op(OpDef("increment", ["X"], ["Out"], {"step": Attr(float, 1.0)},
                               infer_shape=_infer_increment, doc="Out = X + step (X has one element)"))
