"""Adam (Kingma & Ba) with Fluid's bias-corrected step size."""

from __future__ import annotations

from typing import Any

from oar.optimizer.base import Optimizer


class Adam(Optimizer):
    type = "adam"
    _state_slots: tuple = (
        ("moment1", "Moment1", "Moment1Out"),
        ("moment2", "Moment2", "Moment2Out"),
        ("beta1_pow_acc", "Beta1Pow", "Beta1PowOut"),
        ("beta2_pow_acc", "Beta2Pow", "Beta2PowOut"),
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
        lazy_mode: bool = False,
    ) -> None:
        super().__init__(learning_rate, parameter_list, regularization, grad_clip, name)
        for label, b in (("beta1", beta1), ("beta2", beta2)):
            if not isinstance(b, (int, float)) or not 0 <= b < 1:
                raise ValueError(f"Adam: {label} must be a float in [0, 1), given {b!r}")
        if epsilon <= 0:
            raise ValueError(f"Adam: epsilon must be > 0, given {epsilon}")
        self._beta1, self._beta2, self._epsilon, self._lazy_mode = (
            float(beta1),
            float(beta2),
            float(epsilon),
            lazy_mode,
        )

    def _create_accumulators(self, block, parameters):
        for p in parameters:
            self._add_accumulator("moment1", p)
            self._add_accumulator("moment2", p)
            self._add_accumulator(
                "beta1_pow_acc", p, dtype="float32", fill_value=self._beta1, shape=[1]
            )
            self._add_accumulator(
                "beta2_pow_acc", p, dtype="float32", fill_value=self._beta2, shape=[1]
            )

    def _append_optimize_op(self, block, param_and_grad):
        attrs = {
            "beta1": self._beta1,
            "beta2": self._beta2,
            "epsilon": self._epsilon,
            "lazy_mode": self._lazy_mode,
        }
        return self._append_update_op(block, param_and_grad, attrs)


AdamOptimizer = Adam
