"""DpsgdOptimizer: SGD on clipped, noised gradients (one ``dpsgd`` op per parameter)."""

from __future__ import annotations

from oar.errors import ArgumentError
from oar.optimizer.base import Optimizer

__all__ = ["Dpsgd", "DpsgdOptimizer"]


class Dpsgd(Optimizer):
    """``DpsgdOptimizer(learning_rate=0.001, clip=0.9, batch_size=0.999, sigma=1e-8)``."""

    type = "dpsgd"

    def __init__(
        self, learning_rate=0.001, clip=0.9, batch_size=0.999, sigma=1e-8, parameter_list=None
    ) -> None:
        super().__init__(learning_rate, parameter_list=parameter_list)
        for arg, v in (("clip", clip), ("batch_size", batch_size)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
                raise ArgumentError(
                    "DpsgdOptimizer", f"{arg} must be a positive number, given {v!r}"
                )
        self._clip, self._batch_size, self._sigma = float(clip), float(batch_size), float(sigma)
        self._seed = 0

    def _append_optimize_op(self, block, param_and_grad):
        param, grad = param_and_grad
        return block.append_op(
            "dpsgd",
            {
                "Param": [param],
                "Grad": [grad],
                "LearningRate": [self._create_param_lr(param_and_grad)],
            },
            {"ParamOut": [param]},
            {
                "clip": self._clip,
                "batch_size": self._batch_size,
                "sigma": self._sigma,
                "seed": self._seed,
            },
        )


DpsgdOptimizer = Dpsgd
