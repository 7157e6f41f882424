"""RMSProp with optional momentum and Hinton's centered variant (Fluid 1.8 formulas).

``ms = rho*ms + (1-rho)*g*g``; centered: ``mg = rho*mg + (1-rho)*g`` and the
denominator is ``sqrt(ms - mg*mg + eps)``, else ``sqrt(ms + eps)``;
``mom = momentum*mom + lr*g/denom``; ``p -= mom``.
"""

from __future__ import annotations

from typing import Any

from oar.optimizer._checks import check_float
from oar.optimizer.base import Optimizer


class RMSProp(Optimizer):
    type = "rmsprop"
    _state_slots = (
        ("momentum", "Moment", "MomentOut"),
        ("mean_square", "MeanSquare", "MeanSquareOut"),
        ("mean_grad", "MeanGrad", "MeanGradOut"),
    )

    def __init__(
        self,
        learning_rate: Any,
        rho: float = 0.95,
        epsilon: float = 1.0e-6,
        momentum: float = 0.0,
        centered: bool = False,
        parameter_list: Any = None,
        regularization: Any = None,
        grad_clip: Any = None,
        name: str | None = None,
    ) -> None:
        super().__init__(learning_rate, parameter_list, regularization, grad_clip, name)
        if rho is None or epsilon is None or momentum is None:
            raise ValueError("RMSProp: rho, epsilon and momentum must not be None")
        self._rho = check_float("RMSProp", "rho", rho, 0.0, 1.0)
        self._epsilon = check_float("RMSProp", "epsilon", epsilon, 0.0)
        self._momentum = check_float("RMSProp", "momentum", momentum, 0.0)
        self._centered = bool(centered)

    def _append_optimize_op(self, block, param_and_grad):
        attrs = {
            "epsilon": self._epsilon,
            "decay": self._rho,
            "momentum": self._momentum,
            "centered": self._centered,
        }
        return self._append_update_op(block, param_and_grad, attrs)


RMSPropOptimizer = RMSProp
