"""Adagrad and DecayedAdagrad (Fluid 1.8 formulas).

adagrad: ``m += g*g``; ``p -= lr*g/(sqrt(m)+eps)`` (sparse gradients move only their rows).
decayed_adagrad: ``m = decay*m + (1-decay)*g*g``; same step.
"""

from __future__ import annotations

from typing import Any

from oar.optimizer._checks import check_float
from oar.optimizer.base import Optimizer


class Adagrad(Optimizer):
    type = "adagrad"
    _moment_acc_str = "moment"
    _state_slots = (("moment", "Moment", "MomentOut"),)

    def __init__(
        self,
        learning_rate: Any,
        epsilon: float = 1.0e-6,
        parameter_list: Any = None,
        regularization: Any = None,
        grad_clip: Any = None,
        name: str | None = None,
        initial_accumulator_value: float = 0.0,
    ) -> None:
        super().__init__(learning_rate, parameter_list, regularization, grad_clip, name)
        self._epsilon = check_float("Adagrad", "epsilon", epsilon, 0.0)
        self.initial_accumulator_value = check_float(
            "Adagrad", "initial_accumulator_value", initial_accumulator_value, 0.0
        )

    def _create_accumulators(self, block, parameters):
        for p in parameters:
            self._add_accumulator(
                self._moment_acc_str, p, fill_value=self.initial_accumulator_value
            )

    def _append_optimize_op(self, block, param_and_grad):
        return self._append_update_op(block, param_and_grad, {"epsilon": self._epsilon})


class DecayedAdagrad(Optimizer):
    type = "decayed_adagrad"
    _moment_acc_str = "moment"
    _state_slots = (("moment", "Moment", "MomentOut"),)

    def __init__(
        self,
        learning_rate: Any,
        decay: float = 0.95,
        epsilon: float = 1.0e-6,
        parameter_list: Any = None,
        regularization: Any = None,
        grad_clip: Any = None,
        name: str | None = None,
    ) -> None:
        super().__init__(learning_rate, parameter_list, regularization, grad_clip, name)
        self._decay = check_float("DecayedAdagrad", "decay", decay, 0.0, 1.0)
        self._epsilon = check_float("DecayedAdagrad", "epsilon", epsilon, 0.0)

    def _append_optimize_op(self, block, param_and_grad):
        attrs = {"decay": self._decay, "epsilon": self._epsilon}
        return self._append_update_op(block, param_and_grad, attrs)


AdagradOptimizer = Adagrad
DecayedAdagradOptimizer = DecayedAdagrad
