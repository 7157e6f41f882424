"""FTRL-Proximal (McMahan et al. 2013) with Fluid 1.8's ``l1``, ``l2`` and ``lr_power``.

Numbers follow Fluid 1.8 (checked against it): ``n' = n + g²``;
``z += g - (n'^-p - n^-p)/lr * w``; ``w = (l1*sign(z) - z) / (n'^-p/lr + l2)``
where ``|z| > l1``, else 0; with ``lr_power != -0.5`` Fluid adds no ``l2``.
"""

from __future__ import annotations

from typing import Any

from oar.optimizer._checks import check_float
from oar.optimizer.base import Optimizer


class Ftrl(Optimizer):
    type = "ftrl"
    _squared_acc_str = "squared"
    _linear_acc_str = "linear"
    _state_slots = (
        ("squared", "SquaredAccumulator", "SquaredAccumOut"),
        ("linear", "LinearAccumulator", "LinearAccumOut"),
    )

    def __init__(
        self,
        learning_rate: Any,
        l1: float = 0.0,
        l2: float = 0.0,
        lr_power: float = -0.5,
        parameter_list: Any = None,
        regularization: Any = None,
        grad_clip: Any = None,
        name: str | None = None,
    ) -> None:
        super().__init__(learning_rate, parameter_list, regularization, grad_clip, name)
        self._l1 = check_float("Ftrl", "l1", l1, 0.0)
        self._l2 = check_float("Ftrl", "l2", l2, 0.0)
        self._lr_power = check_float("Ftrl", "lr_power", lr_power, None, 0.0)

    def _append_optimize_op(self, block, param_and_grad):
        attrs = {"l1": self._l1, "l2": self._l2, "lr_power": self._lr_power}
        return self._append_update_op(block, param_and_grad, attrs)


FtrlOptimizer = Ftrl
