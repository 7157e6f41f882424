"""The Optimizer base class: backward, regularization, clipping, then update ops.

One pipeline serves both modes: what differs (where gradients come from, the
learning-rate variable, whether accumulators persist across steps, the block
update ops go to) is asked of the current builder (``oar.framework.builder``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from oar.backward import append_backward
from oar.framework import unique_name
from oar.framework.mode import current_builder
from oar.framework.program import Program, default_main_program, program_guard
from oar.framework.variable import Variable
from oar.initializer import Constant
from oar.layer_helper import LayerHelper
from oar.optimizer._lr_vars import LearningRateVars
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
        self._lr_vars = LearningRateVars()
        self._accumulators: dict = {}
        self.helper: LayerHelper | None = None

    # --- learning rate ----------------------------------------------------------------------------
    def _create_global_learning_rate(self) -> None:
        current_builder().set_learning_rate(self)

    def _global_learning_rate(self, program: Program | None = None) -> Variable:
        program = program or default_main_program()
        return self._lr_vars.get(program)

    def _create_param_lr(self, param_and_grad: tuple) -> Variable:
        return current_builder().param_learning_rate(
            self._global_learning_rate(), param_and_grad[0]
        )

    # --- accumulators ---------------------------------------------------------------------------
    def _add_accumulator(
        self,
        name: str,
        param: Variable,
        dtype: Any = None,
        fill_value: float = 0.0,
        shape: Sequence | None = None,
    ) -> Variable:
        builder = current_builder()
        existing = builder.existing_accumulator(self, name, param)
        if existing is not None:
            return existing
        per = self._accumulators.setdefault(name, {})
        helper = LayerHelper(self.type)
        var = helper.create_global_variable(
            name=unique_name.generate(f"{param.name}_{name}"),
            persistable=True,
            dtype=dtype or param.dtype,
            shape=list(shape) if shape is not None else list(param.shape),
        )
        helper.set_variable_initializer(var, Constant(float(fill_value)))
        per[param.name] = var
        builder.restore_accumulator(self, var)
        return var

    def get_opti_var_name_list(self) -> list:
        """Names of the accumulator variables this optimizer created (moments, beta powers...)."""
        return [var.name for per in self._accumulators.values() for var in per.values()]

    def _get_accumulator(self, name: str, param: Variable) -> Variable:
        try:
            return self._accumulators[name][param.name]
        except KeyError:
            raise KeyError(
                f"{type(self).__name__}: no accumulator '{name}' for '{param.name}'"
            ) from None

    # The state one update op reads and writes in place: (accumulator, input slot, output slot or
    # None for read-only state). Listing it gives zero-filled accumulators (override
    # _create_accumulators for other fills) and lets _append_update_op build the op.
    _state_slots: tuple[tuple[str, str, str | None], ...] = ()

    def _create_accumulators(self, block: Any, parameters: list) -> None:
        for p in parameters:
            for acc, _slot, _out in self._state_slots:
                self._add_accumulator(acc, p)

    def _append_update_op(
        self, block: Any, param_and_grad: tuple, attrs: dict, with_lr: bool = True
    ) -> Any:
        """Append the ``self.type`` op updating Param and the ``_state_slots`` accumulators."""
        p, g = param_and_grad
        inputs: dict = {"Param": [p], "Grad": [g]}
        outputs: dict = {"ParamOut": [p]}
        if with_lr:
            inputs["LearningRate"] = [self._create_param_lr(param_and_grad)]
        for acc, slot, out in self._state_slots:
            var = self._get_accumulator(acc, p)
            inputs[slot] = [var]
            if out is not None:
                outputs[out] = [var]
        return block.append_op(self.type, inputs, outputs, attrs)

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
        from oar.clip import error_clip_callback

        plist = parameter_list if parameter_list is not None else self._parameter_list
        callbacks = list(callbacks or [])
        if error_clip_callback not in callbacks:  # as Fluid: minimize honours var.error_clip
            callbacks.append(error_clip_callback)
        with _guard(loss, startup_program):
            return append_backward(loss, plist, no_grad_set, callbacks)

    def apply_gradients(self, params_grads: list) -> list:
        params_grads = sorted(params_grads, key=lambda pg: pg[0].name)
        builder = current_builder()
        program = params_grads[0][0].block.program if params_grads else default_main_program()
        with builder.update_guard(program):
            return builder.run_update_pass(self, params_grads, self._update_pass)

    def _update_pass(self, params_grads: list) -> list:
        if self._grad_clip is not None:
            params_grads = self._grad_clip(params_grads)
        else:
            from oar import clip as _clip

            params_grads = _clip.append_gradient_clip_ops(params_grads)
        params_grads = append_regularization_ops(params_grads, self.regularization)
        return self._create_optimization_pass(params_grads)

    def _create_optimization_pass(self, params_grads: list) -> list:
        block = current_builder().update_block()
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
        """Append backward and update ops for ``loss``; returns ``(optimize_ops, params_grads)``.

        In dygraph the gradients are those ``loss.backward()`` left on the parameters and
        the update ops run at once (``optimize_ops`` is then empty)."""
        builder = current_builder()
        if grad_clip is not None:
            self._grad_clip = grad_clip
        params_grads = builder.gradients(self, loss, startup_program, parameter_list, no_grad_set)
        with builder.loss_guard(loss, startup_program):
            optimize_ops = self.apply_gradients(params_grads)
        return optimize_ops, params_grads

    # --- dygraph state (the eager builder does the work; Fluid 1.8 allows these in dygraph only) ---
    def state_dict(self) -> dict:
        """Accumulators by name and the LR schedule's state, for ``fluid.save_dygraph``."""
        return current_builder().optimizer_state(self, "state_dict")

    def set_dict(self, state_dict: dict) -> None:
        """Restore what :meth:`state_dict` gave (e.g. from ``fluid.load_dygraph``)."""
        current_builder().optimizer_state(self, "set_dict", state_dict)

    set_state_dict = set_dict

    def clear_gradients(self) -> None:
        current_builder().optimizer_state(self, "clear_gradients")

    clear_grad = clear_gradients

    def current_step_lr(self) -> float:
        return current_builder().optimizer_state(self, "current_step_lr")


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
