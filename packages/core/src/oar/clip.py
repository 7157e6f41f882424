"""Gradient clipping hooks applied by optimizers before regularization.

``append_gradient_clip_ops`` applies the per-parameter clip attributes set by
``set_gradient_clip`` or ``ParamAttr(gradient_clip=...)``. The clip classes
themselves (GradientClipByValue/ByNorm/ByGlobalNorm) arrive with the nn toolbox.
"""

from __future__ import annotations


def append_gradient_clip_ops(params_grads: list) -> list:
    """Apply each parameter's ``gradient_clip_attr`` (a callable on [(p, g)]) if it has one."""
    clips = {}
    for p, g in params_grads:
        c = getattr(p, "gradient_clip_attr", None)
        if c is not None and g is not None:
            clips.setdefault(id(c), (c, []))[1].append((p, g))
    if not clips:
        return params_grads
    replaced = {}
    for c, group in clips.values():
        for p, g in c(group):
            replaced[p.name] = g
    return [(p, replaced.get(p.name, g)) for p, g in params_grads]
