"""Adadelta (Zeiler 2012) as Fluid 1.8 defines it; like Fluid, the op takes no learning rate.

``E[g²] = rho*E[g²] + (1-rho)*g²``; ``u = -sqrt((E[u²]+eps)/(E[g²]+eps))*g``;
``E[u²] = rho*E[u²] + (1-rho)*u²``; then, as Fluid 1.8 computes it (its lazily
evaluated ``u`` sees the new ``E[u²]``), ``p -= sqrt((E[u²]+eps)/(E[g²]+eps))*g``.
"""

from __future__ import annotations

from typing import Any

from oar.optimizer._checks import check_float
from oar.optimizer.base import Optimizer


class Adadelta(Optimizer):
    type = "adadelta"
    _avg_squared_grad_acc_str = "_avg_squared_grad"
    _avg_squared_update_acc_str = "_avg_squared_update"
    _state_slots = (
        ("_avg_squared_grad", "AvgSquaredGrad", "AvgSquaredGradOut"),
        ("_avg_squared_update", "AvgSquaredUpdate", "AvgSquaredUpdateOut"),
    )

    def __init__(
        self,
        learning_rate: Any,
        epsilon: float = 1.0e-6,
        rho: float = 0.95,
        parameter_list: Any = None,
        regularization: Any = None,
        grad_clip: Any = None,
        name: str | None = None,
    ) -> None:
        if learning_rate is None or epsilon is None or rho is None:
            raise ValueError("Adadelta: learning_rate, epsilon and rho must not be None")
        super().__init__(learning_rate, parameter_list, regularization, grad_clip, name)
        self._epsilon = check_float("Adadelta", "epsilon", epsilon, 0.0)
        self._rho = check_float("Adadelta", "rho", rho, 0.0, 1.0)

    def _append_optimize_op(self, block, param_and_grad):
        attrs = {"epsilon": self._epsilon, "rho": self._rho}
        return self._append_update_op(block, param_and_grad, attrs, with_lr=False)


AdadeltaOptimizer = Adadelta
