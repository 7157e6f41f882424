"""Gradient clipping (Fluid 1.8's ``fluid.clip``), applied by optimizers before regularization.

A clip object is used as ``optimizer(grad_clip=clip)`` (for every gradient the
optimizer updates), or attached to parameters with ``set_gradient_clip`` or
``ParamAttr(gradient_clip=clip)``; the optimizer's ``grad_clip`` wins when both
are given, as in Fluid. ``need_clip(param) -> bool`` leaves some gradients alone.
Clipping by global norm spans every parameter whose clip has the same
``group_name``.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from oar.framework import unique_name
from oar.framework.dtypes import VarType

__all__ = [
    "GradientClipBase",
    "GradientClipByValue",
    "GradientClipByNorm",
    "GradientClipByGlobalNorm",
    "ClipByValue",
    "ClipByNorm",
    "ClipByGlobalNorm",
    "set_gradient_clip",
    "append_gradient_clip_ops",
    "ErrorClipByValue",
    "error_clip_callback",
]


class GradientClipBase:
    """Base class: ``clip(params_grads) -> params_grads`` appends the clipping ops."""

    def __init__(self, need_clip: Callable | None = None) -> None:
        if need_clip is not None and not callable(need_clip):
            raise TypeError(
                f"{type(self).__name__}: need_clip must be a function param -> bool, given {type(need_clip).__name__}"
            )
        self._need_clip_func = need_clip

    def _needs(self, param: Any) -> bool:
        return self._need_clip_func is None or bool(self._need_clip_func(param))

    def __call__(self, params_grads: list) -> list:
        # the same ops serve dygraph: there the tracer's eager block runs them at once
        return self._static_clip(params_grads)

    def _static_clip(self, params_grads: list) -> list:
        raise NotImplementedError

    def _clip_each(self, params_grads: list, op_type: str, attrs: dict) -> list:
        """Each gradient to clip through its own ``op_type`` op into a new dense gradient."""
        out = []
        for p, g in params_grads:
            if g is None or not self._needs(p):
                out.append((p, g))
                continue
            ng = _new_grad(g, "clip")
            g.block.append_op(op_type, {"X": [g]}, {"Out": [ng]}, attrs)
            out.append((p, ng))
        return out


def _new_grad(grad: Any, tag: str) -> Any:
    """The clipped gradient: dense (a SelectedRows gradient is densified by the clip op's kernel)."""
    return grad.block.create_var(
        name=unique_name.generate(f"{grad.name}_{tag}"),
        shape=grad.shape,
        dtype=grad.dtype,
        type=VarType.LOD_TENSOR,
        stop_gradient=True,
    )


class GradientClipByValue(GradientClipBase):
    """Each gradient element clipped into ``[min, max]`` (``min`` defaults to ``-max``)."""

    def __init__(
        self, max: float, min: float | None = None, need_clip: Callable | None = None
    ) -> None:
        super().__init__(need_clip)
        if min is None:
            if max < 0:
                raise ValueError(
                    f"GradientClipByValue: max must be >= 0 when min is not given, given {max}"
                )
            min = -max
        if min > max:
            raise ValueError(f"GradientClipByValue: min ({min}) must not exceed max ({max})")
        self.max, self.min = float(max), float(min)

    def __str__(self) -> str:
        return f"Clip Gradient By Value, min = {self.min:f}, max={self.max:f}"

    def _static_clip(self, params_grads):
        return self._clip_each(params_grads, "clip", {"min": self.min, "max": self.max})


class GradientClipByNorm(GradientClipBase):
    """Each gradient rescaled so its L2 norm is at most ``clip_norm``."""

    def __init__(self, clip_norm: float, need_clip: Callable | None = None) -> None:
        super().__init__(need_clip)
        if not clip_norm > 0:
            raise ValueError(f"GradientClipByNorm: clip_norm must be > 0, given {clip_norm}")
        self.clip_norm = float(clip_norm)

    def __str__(self) -> str:
        return f"Gradient Clip By Norm, clip_norm={self.clip_norm:f}"

    def _static_clip(self, params_grads):
        return self._clip_each(params_grads, "clip_by_norm", {"max_norm": self.clip_norm})


class GradientClipByGlobalNorm(GradientClipBase):
    """All gradients scaled by ``clip_norm / max(global_norm, clip_norm)``, global_norm over the group."""

    def __init__(
        self, clip_norm: float, group_name: str = "default_group", need_clip: Callable | None = None
    ) -> None:
        super().__init__(need_clip)
        if not clip_norm > 0:
            raise ValueError(f"GradientClipByGlobalNorm: clip_norm must be > 0, given {clip_norm}")
        if not isinstance(group_name, str):
            raise TypeError(
                f"GradientClipByGlobalNorm: group_name must be a str, given {type(group_name).__name__}"
            )
        self.clip_norm = float(clip_norm)
        self.group_name = group_name

    def __str__(self) -> str:
        return f"Gradient Clip By GlobalNorm, global_norm={self.clip_norm:f}"

    def _static_clip(self, params_grads):
        todo = [(p, g) for p, g in params_grads if g is not None and self._needs(p)]
        if not todo:
            return list(params_grads)
        block = todo[0][1].block
        dtype = todo[0][1].dtype
        sq = []
        for _, g in todo:
            s = block.create_var(
                name=unique_name.generate(f"{g.name}_sq_norm"),
                shape=[1],
                dtype=g.dtype,
                stop_gradient=True,
            )
            block.append_op("squared_l2_norm", {"X": [g]}, {"Out": [s]})
            sq.append(s)
        total = block.create_var(
            name=unique_name.generate("global_norm_sq"), shape=[1], dtype=dtype
        )
        block.append_op("sum", {"X": sq}, {"Out": [total]})
        norm = block.create_var(name=unique_name.generate("global_norm"), shape=[1], dtype=dtype)
        block.append_op("sqrt", {"X": [total]}, {"Out": [norm]})
        limit = block.create_var(name=unique_name.generate("clip_norm"), shape=[1], dtype=dtype)
        block.append_op(
            "fill_constant",
            {},
            {"Out": [limit]},
            {"shape": [1], "dtype": dtype, "value": self.clip_norm},
        )
        denom = block.create_var(
            name=unique_name.generate("global_norm_max"), shape=[1], dtype=dtype
        )
        block.append_op("elementwise_max", {"X": [limit], "Y": [norm]}, {"Out": [denom]})
        scale = block.create_var(
            name=unique_name.generate("global_norm_scale"), shape=[1], dtype=dtype
        )
        block.append_op("elementwise_div", {"X": [limit], "Y": [denom]}, {"Out": [scale]})
        scaled = {}
        for p, g in todo:
            ng = _new_grad(g, "clip")
            block.append_op("elementwise_mul", {"X": [g], "Y": [scale]}, {"Out": [ng]})
            scaled[p.name] = ng
        return [(p, scaled.get(p.name, g)) for p, g in params_grads]


ClipByValue = GradientClipByValue
ClipByNorm = GradientClipByNorm
ClipByGlobalNorm = GradientClipByGlobalNorm


def set_gradient_clip(
    clip: GradientClipBase, param_list: Sequence | None = None, program: Any = None
) -> None:
    """Attach ``clip`` to the parameters of ``param_list`` (names or Parameters; default all of ``program``)."""
    from oar.framework.program import default_main_program

    if not isinstance(clip, GradientClipBase):
        raise TypeError(
            f"set_gradient_clip: clip must be a GradientClipByValue/ByNorm/ByGlobalNorm, given {type(clip).__name__}"
        )
    warnings.warn(
        "set_gradient_clip: an optimizer's grad_clip=, when given, takes precedence over this setting",
        stacklevel=2,
    )
    program = program or default_main_program()
    block = program.global_block()
    if param_list is None:
        params = block.all_parameters()
    else:
        params = []
        for p in param_list:
            if isinstance(p, str):
                v = block.vars.get(p)
                if v is None or not hasattr(v, "gradient_clip_attr"):
                    raise ValueError(f"set_gradient_clip: '{p}' is not a parameter of the program")
                params.append(v)
            elif hasattr(p, "gradient_clip_attr"):
                params.append(p)
            else:
                raise TypeError(
                    f"set_gradient_clip: param_list entries must be parameter names or Parameters, "
                    f"given {type(p).__name__}"
                )
    for p in params:
        p.gradient_clip_attr = copy.deepcopy(clip)


def append_gradient_clip_ops(params_grads: list) -> list:
    """Apply each parameter's ``gradient_clip_attr``; global-norm clips of one group_name share one norm."""
    groups: dict = {}
    for p, g in params_grads:
        c = getattr(p, "gradient_clip_attr", None)
        if c is None or g is None:
            continue
        if not callable(c):
            raise TypeError(
                f"parameter '{p.name}': gradient_clip must be a fluid.clip object, given {type(c).__name__}"
            )
        if isinstance(c, GradientClipByGlobalNorm):
            key = ("global", c.group_name)
            if key in groups and groups[key][0].clip_norm != c.clip_norm:
                raise ValueError(
                    f"GradientClipByGlobalNorm: every parameter of group '{c.group_name}' must use the same "
                    f"clip_norm, given {groups[key][0].clip_norm} and {c.clip_norm} ('{p.name}')"
                )
        else:
            key = ("param", p.name)
        groups.setdefault(key, (c, []))[1].append((p, g))
    if not groups:
        return params_grads
    replaced = {}
    for c, group in groups.values():
        for p, g in c(group):
            replaced[p.name] = g
    return [(p, replaced.get(p.name, g)) for p, g in params_grads]


# --- error clipping: the gradient of one intermediate variable, clipped as backward makes it ---
class ErrorClipByValue:
    """Clip the gradient flowing into a variable to ``[min, max]`` (``min`` defaults to
    ``-max``): set ``var.error_clip = ErrorClipByValue(...)``; ``Optimizer.minimize`` (or
    ``append_backward(..., callbacks=[error_clip_callback])``) appends the clip op."""

    def __init__(self, max: float, min: float | None = None) -> None:
        hi = float(max)
        lo = -hi if min is None else float(min)
        if lo > hi:
            raise ValueError(f"ErrorClipByValue: min ({lo}) must not exceed max ({hi})")
        self.max, self.min = hi, lo

    def __str__(self) -> str:
        return f"ByValue, min={self.min:f}, max={self.max:f}"

    def _append_clip_op(self, block: Any, grad_name: str) -> None:
        op = block.append_op(
            "clip",
            {"X": [grad_name]},
            {"Out": [grad_name]},
            {"min": self.min, "max": self.max, "op_role": block.program._current_role},
            infer=False,
        )
        return op


def error_clip_callback(block: Any, context: dict) -> None:
    """A backward callback: after each grad op, clip the gradients of variables that carry an
    ``error_clip``."""
    op = context["op"]
    for name in op.output_arg_names:
        if not name.endswith("@GRAD"):
            continue
        fwd = block._find_var_recursive(name[: -len("@GRAD")])
        clip = getattr(fwd, "error_clip", None) if fwd is not None else None
        if clip is None:
            continue
        if not isinstance(clip, ErrorClipByValue):
            raise TypeError(
                f"variable '{fwd.name}': error_clip must be an ErrorClipByValue, given "
                f"{type(clip).__name__}"
            )
        clip._append_clip_op(block, name)
