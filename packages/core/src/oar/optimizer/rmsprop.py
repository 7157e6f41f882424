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

    def _create_accumulators(self, block, parameters):
        for p in parameters:
            self._add_accumulator("momentum", p)
            self._add_accumulator("mean_square", p)
            self._add_accumulator("mean_grad", p)

    def _append_optimize_op(self, block, param_and_grad):
        p, g = param_and_grad
        mom = self._get_accumulator("momentum", p)
        ms = self._get_accumulator("mean_square", p)
        mg = self._get_accumulator("mean_grad", p)
        return block.append_op(
            "rmsprop",
            {
                "Param": [p],
                "Grad": [g],
                "Moment": [mom],
                "MeanSquare": [ms],
                "MeanGrad": [mg],
                "LearningRate": [self._create_param_lr(param_and_grad)],
            },
            {"ParamOut": [p], "MomentOut": [mom], "MeanSquareOut": [ms], "MeanGradOut": [mg]},
            {
                "epsilon": self._epsilon,
                "decay": self._rho,
                "momentum": self._momentum,
                "centered": self._centered,
            },
        )


RMSPropOptimizer = RMSProp
