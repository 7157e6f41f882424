"""Adam (Kingma & Ba) with Fluid's bias-corrected step size."""

from __future__ import annotations

from typing import Any

from oar.optimizer.base import Optimizer


class Adam(Optimizer):
    type = "adam"

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
        p, g = param_and_grad
        m1 = self._get_accumulator("moment1", p)
        m2 = self._get_accumulator("moment2", p)
        b1 = self._get_accumulator("beta1_pow_acc", p)
        b2 = self._get_accumulator("beta2_pow_acc", p)
        return block.append_op(
            "adam",
            {
                "Param": [p],
                "Grad": [g],
                "LearningRate": [self._create_param_lr(param_and_grad)],
                "Moment1": [m1],
                "Moment2": [m2],
                "Beta1Pow": [b1],
                "Beta2Pow": [b2],
            },
            {
                "ParamOut": [p],
                "Moment1Out": [m1],
                "Moment2Out": [m2],
                "Beta1PowOut": [b1],
                "Beta2PowOut": [b2],
            },
            {
                "beta1": self._beta1,
                "beta2": self._beta2,
                "epsilon": self._epsilon,
                "lazy_mode": self._lazy_mode,
            },
        )


AdamOptimizer = Adam
