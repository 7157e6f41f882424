"""RecomputeOptimizer: Fluid 1.8's wrapper that takes checkpoints for recomputation.

oar computes the same gradients and updates as the wrapped optimizer; the checkpoints are
validated and passed to ``append_backward``. Deliberate difference (for now): oar keeps
the forward activations instead of recomputing the segments between checkpoints, so the
memory saving of Fluid's recompute is not realised.
"""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError

__all__ = ["RecomputeOptimizer"]


class RecomputeOptimizer:
    """``RecomputeOptimizer(optimizer)``; call ``_set_checkpoints([vars])`` before ``minimize``."""

    def __init__(self, optimizer: Any) -> None:
        from oar.optimizer.base import Optimizer

        if not isinstance(optimizer, Optimizer):
            raise ArgumentTypeError(
                "RecomputeOptimizer",
                f"optimizer must be an optimizer, given {type(optimizer).__name__}",
            )
        self._optimizer = optimizer
        self._checkpoints: list | None = None
        self._learning_rate = optimizer._learning_rate
        self.type = optimizer.type

    def _set_checkpoints(self, checkpoints: Any) -> None:
        from oar.framework.variable import Variable

        if not isinstance(checkpoints, (list, tuple)) or not all(
            isinstance(c, (Variable, str)) for c in checkpoints
        ):
            raise ArgumentTypeError(
                "RecomputeOptimizer",
                f"checkpoints must be a list of Variables, given {checkpoints!r}",
            )
        self._checkpoints = list(checkpoints)

    def load(self, stat_dict: Any) -> None:
        raise NotImplementedError("RecomputeOptimizer.load is not supported (as in Fluid 1.8)")

    def backward(
        self, loss, startup_program=None, parameter_list=None, no_grad_set=None, callbacks=None
    ):
        from oar.backward import append_backward
        from oar.clip import error_clip_callback
        from oar.optimizer.base import _guard

        if self._checkpoints is None:
            raise ArgumentError(
                "RecomputeOptimizer", "call _set_checkpoints([...]) before minimize"
            )
        callbacks = list(callbacks or []) + [error_clip_callback]
        with _guard(loss, startup_program):
            return append_backward(
                loss, parameter_list, no_grad_set, callbacks, checkpoints=self._checkpoints
            )

    def apply_optimize(self, loss, startup_program, params_grads):
        return self._optimizer.apply_optimize(loss, startup_program, params_grads)

    def apply_gradients(self, params_grads):
        return self._optimizer.apply_gradients(params_grads)

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        params_grads = self.backward(loss, startup_program, parameter_list, no_grad_set)
        optimize_ops = self.apply_optimize(loss, startup_program, params_grads)
        return optimize_ops, params_grads
