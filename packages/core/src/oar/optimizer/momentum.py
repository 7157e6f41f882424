"""Momentum (optionally Nesterov) and LARS momentum, as Fluid 1.8 defines them.

momentum: ``v = mu*v + g``; ``p -= lr*v`` (Nesterov: ``p -= lr*(g + mu*v)``).
lars_momentum: the step is scaled per layer by ``lars_coeff*|p| / (|g| + wd*|p|)``.
"""

from __future__ import annotations

from typing import Any

from oar.optimizer._checks import check_float
from oar.optimizer.base import Optimizer


class Momentum(Optimizer):
    type = "momentum"
    _velocity_acc_str = "velocity"
    _state_slots = (("velocity", "Velocity", "VelocityOut"),)

    def __init__(
        self,
        learning_rate: Any,
        momentum: float,
        parameter_list: Any = None,
        use_nesterov: bool = False,
        regularization: Any = None,
        grad_clip: Any = None,
        name: str | None = None,
    ) -> None:
        super().__init__(learning_rate, parameter_list, regularization, grad_clip, name)
        self._momentum = check_float("Momentum", "momentum", momentum, 0.0)
        self._use_nesterov = bool(use_nesterov)

    def _append_optimize_op(self, block, param_and_grad):
        attrs = {"mu": self._momentum, "use_nesterov": self._use_nesterov}
        return self._append_update_op(block, param_and_grad, attrs)


class LarsMomentum(Optimizer):
    type = "lars_momentum"
    _velocity_acc_str = "velocity"
    _state_slots = (("velocity", "Velocity", "VelocityOut"),)

    def __init__(
        self,
        learning_rate: Any,
        momentum: float,
        lars_coeff: float = 0.001,
        lars_weight_decay: float = 0.0005,
        parameter_list: Any = None,
        regularization: Any = None,
        grad_clip: Any = None,
        name: str | None = None,
    ) -> None:
        super().__init__(learning_rate, parameter_list, regularization, grad_clip, name)
        self._momentum = check_float("LarsMomentum", "momentum", momentum, 0.0)
        self._lars_coeff = check_float("LarsMomentum", "lars_coeff", lars_coeff, 0.0)
        self._lars_weight_decay = check_float(
            "LarsMomentum", "lars_weight_decay", lars_weight_decay, 0.0
        )

    def _append_optimize_op(self, block, param_and_grad):
        attrs = {
            "mu": self._momentum,
            "lars_coeff": self._lars_coeff,
            "lars_weight_decay": self._lars_weight_decay,
        }
        return self._append_update_op(block, param_and_grad, attrs)


MomentumOptimizer = Momentum
LarsMomentumOptimizer = LarsMomentum
