"""The Optimizer base class: backward, regularization, clipping, then update ops."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from oar.backward import append_backward
from oar.framework import unique_name
from oar.framework.operator import OpRole
from oar.framework.program import Program, default_main_program, program_guard
from oar.framework.variable import Variable
from oar.initializer import Constant
from oar.layer_helper import LayerHelper
from oar.regularizer import append_regularization_ops


class Optimizer:
    """Base optimizer. Subclasses set ``type`` and implement ``_append_optimize_op``.

    ``learning_rate`` is a float or a Variable (an LR schedule's output);
    ``regularization`` applies to parameters whose ParamAttr has none;
    ``grad_clip`` is a ``fluid.clip`` object applied to all gradients.
    """

    type = "optimizer"

    def __init__(
        self,
        learning_rate: float | Variable,
        parameter_list: Sequence | None = None,
        regularization: Any = None,
        grad_clip: Any = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(learning_rate, (int, float, Variable)) and not _is_lr_schedule(
            learning_rate
        ):
            raise TypeError(
                f"{type(self).__name__}: learning_rate must be a float or a Variable, "
                f"given {type(learning_rate).__name__}"
            )
        if isinstance(learning_rate, (int, float)) and learning_rate < 0:
            raise ValueError(
                f"{type(self).__name__}: learning_rate must be >= 0, given {learning_rate}"
            )
        self._learning_rate = learning_rate
        self._parameter_list = list(parameter_list) if parameter_list is not None else None
        self.regularization = regularization
        self._grad_clip = grad_clip
        self._name = name
        self._lr_vars: dict = {}
        self._accumulators: dict = {}
        self.helper: LayerHelper | None = None

    # --- learning rate ----------------------------------------------------------------------------
    def _create_global_learning_rate(self) -> None:
        program = default_main_program()
        if id(program) in self._lr_vars:
            return
        if isinstance(self._learning_rate, Variable):
            self._lr_vars[id(program)] = self._learning_rate
            return
        helper = LayerHelper("learning_rate")
        var = helper.create_global_variable(
            name=unique_name.generate("learning_rate"), shape=[1], dtype="float32", persistable=True
        )
        helper.set_variable_initializer(var, Constant(float(self._learning_rate)))
        self._lr_vars[id(program)] = var

    def _global_learning_rate(self, program: Program | None = None) -> Variable:
        program = program or default_main_program()
        return self._lr_vars.get(id(program))

    def _create_param_lr(self, param_and_grad: tuple) -> Variable:
        param = param_and_grad[0]
        if _dygraph():
            from oar.dygraph.optimizer import scaled_lr

            return scaled_lr(self, param)
        lr = self._global_learning_rate()
        mult = float(param.optimize_attr.get("learning_rate", 1.0))
        if mult == 1.0:
            return lr
        block = default_main_program().global_block()
        out = block.create_var(
            name=unique_name.generate(f"{param.name}_lr"), shape=[1], dtype=lr.dtype
        )
        block.append_op("scale", {"X": [lr]}, {"Out": [out]}, {"scale": mult})
        return out

    # --- accumulators ---------------------------------------------------------------------------
    def _add_accumulator(
        self,
        name: str,
        param: Variable,
        dtype: Any = None,
        fill_value: float = 0.0,
        shape: Sequence | None = None,
    ) -> Variable:
        per = self._accumulators.setdefault(name, {})
        if param.name in per and _dygraph():
            return per[param.name]  # dygraph calls minimize every step
        if param.name in per:
            raise ValueError(
                f"{type(self).__name__}: accumulator '{name}' for '{param.name}' exists already"
            )
        helper = LayerHelper(self.type)
        var = helper.create_global_variable(
            name=unique_name.generate(f"{param.name}_{name}"),
            persistable=True,
            dtype=dtype or param.dtype,
            shape=list(shape) if shape is not None else list(param.shape),
        )
        helper.set_variable_initializer(var, Constant(float(fill_value)))
        per[param.name] = var
        if _dygraph():
            from oar.dygraph.optimizer import fill_from_holder

            fill_from_holder(self, var)
        return var

    def _get_accumulator(self, name: str, param: Variable) -> Variable:
        try:
            return self._accumulators[name][param.name]
        except KeyError:
            raise KeyError(
                f"{type(self).__name__}: no accumulator '{name}' for '{param.name}'"
            ) from None

    def _create_accumulators(self, block: Any, parameters: list) -> None:
        pass

    def _append_optimize_op(self, block: Any, param_and_grad: tuple) -> Any:
        raise NotImplementedError

    def _finish_update(self, block: Any, parameters_and_grads: list) -> list:
        return []

    # --- the pipeline ---------------------------------------------------------------------------
    def backward(
        self,
        loss: Variable,
        startup_program: Program | None = None,
        parameter_list: Sequence | None = None,
        no_grad_set: Any = None,
        callbacks: Any = None,
    ) -> list:
        plist = parameter_list if parameter_list is not None else self._parameter_list
        with _guard(loss, startup_program):
            return append_backward(loss, plist, no_grad_set, callbacks)

    def apply_gradients(self, params_grads: list) -> list:
        params_grads = sorted(params_grads, key=lambda pg: pg[0].name)
        program = params_grads[0][0].block.program if params_grads else default_main_program()
        with program._role_guard(OpRole.Optimize):
            if self._grad_clip is not None:
                params_grads = self._grad_clip(params_grads)
            else:
                from oar import clip as _clip

                params_grads = _clip.append_gradient_clip_ops(params_grads)
            params_grads = append_regularization_ops(params_grads, self.regularization)
            return self._create_optimization_pass(params_grads)

    def _create_optimization_pass(self, params_grads: list) -> list:
        block = default_main_program().global_block()
        start = len(block.ops)
        self._create_global_learning_rate()
        self._create_accumulators(block, [p for p, g in params_grads if g is not None])
        for pg in params_grads:
            if pg[1] is None or not pg[0].trainable:
                continue
            self._append_optimize_op(block, pg)
        self._finish_update(block, params_grads)
        return block.ops[start:]

    def apply_optimize(
        self, loss: Variable, startup_program: Program | None, params_grads: list
    ) -> list:
        with _guard(loss, startup_program):
            return self.apply_gradients(params_grads)

    def minimize(
        self,
        loss: Variable,
        startup_program: Program | None = None,
        parameter_list: Sequence | None = None,
        no_grad_set: Any = None,
        grad_clip: Any = None,
    ) -> tuple:
        """Append backward and update ops for ``loss``; returns ``(optimize_ops, params_grads)``."""
        from oar.framework.mode import in_dygraph_mode

        if in_dygraph_mode():
            return self._dygraph_minimize(loss, parameter_list, no_grad_set)
        if not isinstance(loss, Variable):
            raise TypeError(
                f"{type(self).__name__}.minimize: loss must be a Variable, given {type(loss).__name__}"
            )
        if grad_clip is not None:
            self._grad_clip = grad_clip
        params_grads = self.backward(loss, startup_program, parameter_list, no_grad_set)
        optimize_ops = self.apply_optimize(loss, startup_program, params_grads)
        return optimize_ops, params_grads

    def _dygraph_minimize(self, loss, parameter_list, no_grad_set):
        from oar.dygraph.optimizer import dygraph_minimize

        return dygraph_minimize(self, loss, parameter_list, no_grad_set)

    # --- dygraph state (oar.dygraph.optimizer does the work) -------------------------------------
    def state_dict(self) -> dict:
        """Accumulators by name and the LR schedule's state, for ``fluid.save_dygraph``."""
        from oar.dygraph.optimizer import state_dict

        return state_dict(self)

    def set_dict(self, state_dict: dict) -> None:
        """Restore what :meth:`state_dict` gave (e.g. from ``fluid.load_dygraph``)."""
        from oar.dygraph.optimizer import set_dict

        set_dict(self, state_dict)

    set_state_dict = set_dict

    def clear_gradients(self) -> None:
        from oar.dygraph.optimizer import clear_gradients

        clear_gradients(self)

    clear_grad = clear_gradients

    def current_step_lr(self) -> float:
        from oar.dygraph.optimizer import current_lr

        return current_lr(self)


def _dygraph() -> bool:
    from oar.framework.mode import in_dygraph_mode

    return in_dygraph_mode()


def _is_lr_schedule(obj: Any) -> bool:
    return hasattr(obj, "step") and callable(obj)


@contextlib.contextmanager
def _guard(loss: Variable, startup_program: Program | None):
    program = loss.block.program
    if startup_program is None:
        with program_guard(program):
            yield
    else:
        with program_guard(program, startup_program):
            yield
