"""Stochastic gradient descent: param -= lr * grad."""

from __future__ import annotations

from oar.optimizer.base import Optimizer


class SGD(Optimizer):
    type = "sgd"

    def _append_optimize_op(self, block, param_and_grad):
        param, grad = param_and_grad
        return block.append_op(
            "sgd",
            {
                "Param": [param],
                "Grad": [grad],
                "LearningRate": [self._create_param_lr(param_and_grad)],
            },
            {"ParamOut": [param]},
        )


SGDOptimizer = SGD
