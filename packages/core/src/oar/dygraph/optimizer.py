"""Optimizers in dygraph mode: what the eager builder does where the static one appends ops.

``Optimizer.minimize`` runs one pipeline in both modes (gradients, clip,
regularization, learning rate, accumulators, update ops) and asks the current
builder for the mode's parts; under ``fluid.dygraph.guard()`` that is
``oar.dygraph.eager_block.EagerBuilder``, which calls these functions. The
optimizer's own ``_append_optimize_op`` (and the regularizers and clips) run
against the tracer's :class:`EagerBlock`; accumulators are eager variables
keyed by parameter name, created on the first step (or filled from ``set_dict``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oar.dygraph.learning_rate_scheduler import LearningRateDecay, ReduceLROnPlateau
from oar.dygraph.varbase import VarBase, _tracer
from oar.framework.program import default_main_program


def _params(opt: Any, parameter_list: Any) -> list:
    params = parameter_list if parameter_list is not None else opt._parameter_list
    if params is None:
        raise ValueError(
            f"{type(opt).__name__}: in dygraph mode the optimizer needs parameter_list= "
            f"(e.g. parameter_list=model.parameters())"
        )
    return list(params)


def current_step_lr(opt: Any) -> float:
    lr = opt._learning_rate
    if isinstance(lr, LearningRateDecay):
        return float(lr.step()) if not isinstance(lr, ReduceLROnPlateau) else lr.learning_rate
    if isinstance(lr, VarBase):
        return float(lr.numpy().reshape(-1)[0])
    return float(lr)


def set_lr_var(opt: Any) -> None:
    """Put this step's learning rate (advancing a schedule) where ``_create_param_lr`` finds it."""
    lr = opt._learning_rate
    if isinstance(lr, LearningRateDecay):
        value = lr()
    elif isinstance(lr, VarBase):
        opt._lr_vars.set(default_main_program(), lr)
        return
    elif isinstance(lr, (int, float)):
        value = float(lr)
    else:
        raise TypeError(
            f"{type(opt).__name__}: in dygraph mode learning_rate must be a float or a "
            f"fluid.dygraph learning-rate schedule, given {type(lr).__name__}"
        )
    program = default_main_program()
    var = opt._lr_vars.get(program)
    if not isinstance(var, VarBase):
        var = VarBase(None, name="learning_rate", stop_gradient=True, persistable=True)
        opt._lr_vars.set(program, var)
    var._value = _tracer().to_device(np.array([value], dtype="float32"))  # on the guard's place


def gradients(opt: Any, parameter_list: Any = None, no_grad_set: Any = None) -> list:
    """(parameter, gradient) pairs from what ``loss.backward()`` left on the parameters."""
    skip = {x if isinstance(x, str) else x.name for x in (no_grad_set or ())}
    params_grads = []
    for p in _params(opt, parameter_list):
        if not getattr(p, "trainable", True) or p.name in skip or p._grad is None:
            continue
        params_grads.append((p, VarBase(p._grad, name=p.name + "@GRAD", stop_gradient=True)))
    return params_grads


def scaled_lr(lr: VarBase, param: Any) -> VarBase:
    """The learning rate times the parameter's ``ParamAttr(learning_rate=...)``."""
    mult = float(param.optimize_attr.get("learning_rate", 1.0))
    if mult == 1.0:
        return lr
    return VarBase(np.asarray(lr._value * np.float32(mult), dtype=lr.dtype), stop_gradient=True)


def fill_from_holder(opt: Any, var: VarBase) -> None:
    """An accumulator created after ``set_dict`` takes the saved value."""
    holder = getattr(opt, "_accumulators_holder", None) or {}
    if var.name in holder:
        value = holder[var.name]
        arr = value.numpy() if isinstance(value, VarBase) else np.asarray(value)
        if list(arr.shape) != var.shape:
            raise ValueError(
                f"{type(opt).__name__}.set_dict: '{var.name}' has shape {var.shape}, the saved "
                f"value has shape {list(arr.shape)}"
            )
        var._value = _tracer().to_device(np.array(arr, dtype=var.dtype))


def state_dict(opt: Any) -> dict:
    """Accumulators by name, plus the schedule's state and ``global_step`` (Fluid 1.8's layout)."""
    out: dict = {}
    for per in opt._accumulators.values():
        for var in per.values():
            out[var.name] = var
    lr = opt._learning_rate
    if isinstance(lr, LearningRateDecay):
        out["LR_Scheduler"] = lr.state_dict()
        if not isinstance(lr, ReduceLROnPlateau):
            out["global_step"] = VarBase(np.array([lr.step_num], dtype="int32"), name="global_step")
    return out


def set_dict(opt: Any, state: dict) -> None:
    """Restore accumulators (now, or when they are created) and the schedule's step."""
    lr = opt._learning_rate
    if isinstance(lr, LearningRateDecay):
        if "LR_Scheduler" not in state:
            raise KeyError(
                f"{type(opt).__name__}.set_dict: the state dict has no 'LR_Scheduler' entry for the "
                f"learning-rate schedule"
            )
        lr.set_dict(state["LR_Scheduler"])
        if not isinstance(lr, ReduceLROnPlateau) and "global_step" in state:
            g = state["global_step"]
            lr.step_num = int(np.asarray(g.numpy() if isinstance(g, VarBase) else g).reshape(-1)[0])
    opt._accumulators_holder = {
        k: (v.numpy() if isinstance(v, VarBase) else v) for k, v in state.items()
    }
    for per in opt._accumulators.values():
        for var in per.values():
            if var.name not in state:
                raise KeyError(
                    f"{type(opt).__name__}.set_dict: accumulator '{var.name}' is missing from the "
                    f"state dict"
                )
            fill_from_holder(opt, var)


def clear_gradients(opt: Any) -> None:
    for p in opt._parameter_list or ():
        p.clear_gradient()
