"""LAMB (You et al. 2019): Adam's direction plus weight decay, scaled by the trust ratio |p|/|r|.

As in Fluid 1.8 (checked against it) the step has no bias correction:
``r = m1/(sqrt(m2)+eps) + wd*p``, ``p -= lr * |p|/|r| * r``; the op reads
``Beta1Pow``/``Beta2Pow`` and leaves them unchanged.
``exclude_from_weight_decay_fn(param) -> True`` gives that parameter zero decay.
"""

from __future__ import annotations

from typing import Any

from oar.optimizer._checks import check_float
from oar.optimizer.adam import Adam


class Lamb(Adam):
    type = "lamb"
    # the op reads the beta powers and leaves them unchanged
    _state_slots = (
        ("moment1", "Moment1", "Moment1Out"),
        ("moment2", "Moment2", "Moment2Out"),
        ("beta1_pow_acc", "Beta1Pow", None),
        ("beta2_pow_acc", "Beta2Pow", None),
    )

    def __init__(
        self,
        learning_rate: Any = 0.001,
        lamb_weight_decay: float = 0.01,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-6,
        parameter_list: Any = None,
        regularization: Any = None,
        grad_clip: Any = None,
        exclude_from_weight_decay_fn: Any = None,
        name: str | None = None,
    ) -> None:
        super().__init__(
            learning_rate, beta1, beta2, epsilon, parameter_list, regularization, grad_clip, name
        )
        self._weight_decay = check_float("Lamb", "lamb_weight_decay", lamb_weight_decay, 0.0)
        if exclude_from_weight_decay_fn is not None and not callable(exclude_from_weight_decay_fn):
            raise TypeError("Lamb: exclude_from_weight_decay_fn must be callable(param) -> bool")
        self._exclude_from_weight_decay_fn = exclude_from_weight_decay_fn

    def _append_optimize_op(self, block, param_and_grad):
        p = param_and_grad[0]
        wd = self._weight_decay
        if self._exclude_from_weight_decay_fn is not None and self._exclude_from_weight_decay_fn(p):
            wd = 0.0
        attrs = {
            "beta1": self._beta1,
            "beta2": self._beta2,
            "epsilon": self._epsilon,
            "weight_decay": wd,
        }
        return self._append_update_op(block, param_and_grad, attrs)


LambOptimizer = Lamb
