"""Gradient preprocessing that mixes several parameters (clipping by global norm) in the
pserver rewrite: it stays on the trainer.

``GradientClipByGlobalNorm`` needs every gradient at once, which no single pserver holds.
When an optimize op reads the gradients of several parameters, every optimize op that is
not a parameter update (and writes no persistable variable) stays in the trainer program,
and each trainer sends the gradient its update op reads (``w@GRAD_clip_0``) under the
pserver's gradient name (``w@GRAD``). In sync mode the pservers then average gradients that
each trainer clipped by its own global norm, as data-parallel training in Fluid 1.8 does.
"""

from __future__ import annotations


def _updates(opt_ops: list) -> dict:
    return {
        id(op): op.input("Param")[0]
        for op in opt_ops
        if "Param" in op.input_names and op.input("Param")
    }


def trainer_side(opt_ops: list, params: list, var_meta: dict) -> tuple:
    """(optimize ops kept on the trainer, {param: gradient its update reads}); both empty when
    no optimize op mixes parameters."""
    updates = _updates(opt_ops)
    closure = {p: {p + "@GRAD"} for p in params}
    mixed = False
    for op in opt_ops:
        if id(op) in updates:
            continue
        names = set(op.input_arg_names) | set(op.output_arg_names)
        owners = [p for p in params if names & closure[p]]
        mixed = mixed or len(owners) > 1
        for p in owners:
            closure[p] |= set(op.output_arg_names)
    if not mixed:
        return [], {}
    keep = [
        op
        for op in opt_ops
        if id(op) not in updates
        and not any(n in var_meta and var_meta[n].persistable for n in op.output_arg_names)
    ]
    grads: dict = {}
    for op in opt_ops:
        if id(op) in updates and "Grad" in op.input_names and op.input("Grad"):
            grads.setdefault(updates[id(op)], op.input("Grad")[0])
    return keep, grads
