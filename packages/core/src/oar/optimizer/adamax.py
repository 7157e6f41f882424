"""Adamax (Adam with the infinity norm), as Fluid 1.8 defines it.

``m = b1*m + (1-b1)*g``; ``u = max(b2*u + eps, |g|)``; ``p -= lr/(1-b1^t) * m/u``.
The ``beta1_pow_acc`` accumulator is advanced by a ``scale`` op after the update.
"""

from __future__ import annotations

from typing import Any

from oar.optimizer._checks import check_float
from oar.optimizer.base import Optimizer


class Adamax(Optimizer):
    type = "adamax"
    _state_slots = (
        ("moment", "Moment", "MomentOut"),
        ("inf_norm", "InfNorm", "InfNormOut"),
        ("beta1_pow_acc", "Beta1Pow", None),  # advanced by _finish_update's scale op
    )

    def __init__(
        self,
        learning_rate: Any = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        parameter_list: Any = None,
        regularization: Any = None,
        grad_clip: Any = None,
        name: str | None = None,
    ) -> None:
        super().__init__(learning_rate, parameter_list, regularization, grad_clip, name)
        self._beta1 = check_float("Adamax", "beta1", beta1, 0.0, 1.0, high_open=True)
        self._beta2 = check_float("Adamax", "beta2", beta2, 0.0, 1.0, high_open=True)
        self._epsilon = check_float("Adamax", "epsilon", epsilon, 0.0)

    def _create_accumulators(self, block, parameters):
        for p in parameters:
            self._add_accumulator("moment", p)
            self._add_accumulator("inf_norm", p)
            self._add_accumulator(
                "beta1_pow_acc", p, dtype="float32", fill_value=self._beta1, shape=[1]
            )

    def _append_optimize_op(self, block, param_and_grad):
        attrs = {"beta1": self._beta1, "beta2": self._beta2, "epsilon": self._epsilon}
        return self._append_update_op(block, param_and_grad, attrs)

    def _finish_update(self, block, parameters_and_grads):
        ops = []
        for p, g in parameters_and_grads:
            if g is None or not p.trainable:
                continue
            b1p = self._get_accumulator("beta1_pow_acc", p)
            ops.append(
                block.append_op("scale", {"X": [b1p]}, {"Out": [b1p]}, {"scale": self._beta1})
            )
        return ops


AdamaxOptimizer = Adamax
