"""Epoch-driven dygraph learning-rate schedules of Fluid 1.8: StepDecay, MultiStepDecay,
LambdaDecay. ``minimize`` does not advance them: call ``epoch()`` once per epoch (or
``epoch(n)`` to jump to epoch ``n``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oar.dygraph.learning_rate_scheduler import LearningRateDecay
from oar.errors import ArgumentError, ArgumentTypeError

__all__ = ["StepDecay", "MultiStepDecay", "LambdaDecay"]


class _EpochDecay(LearningRateDecay):
    _state_keys = ("epoch_num", "learning_rate")

    def __init__(self, learning_rate: float, dtype: str = "float32") -> None:
        super().__init__(0, 1, dtype)
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float)):
            raise ArgumentTypeError(
                type(self).__name__, f"learning_rate must be a float, given {learning_rate!r}"
            )
        self.base_lr = float(learning_rate)
        self.epoch_num = -1
        self.learning_rate = self.base_lr
        self.epoch()

    def __call__(self) -> float:
        return self.learning_rate

    def step(self) -> float:
        return self.learning_rate

    def epoch(self, epoch: int | None = None) -> None:
        """Advance to the next epoch (or to ``epoch``) and recompute the rate."""
        self.epoch_num = self.epoch_num + 1 if epoch is None else int(epoch)
        self.learning_rate = float(self.get_lr())

    def get_lr(self) -> float:
        raise NotImplementedError


def _decay_rate(layer: str, decay_rate: Any) -> float:
    if isinstance(decay_rate, bool) or not isinstance(decay_rate, (int, float)):
        raise ArgumentTypeError(layer, f"decay_rate must be a float, given {decay_rate!r}")
    if decay_rate >= 1.0:
        raise ArgumentError(layer, f"decay_rate must be < 1.0, given {decay_rate}")
    return float(decay_rate)


class StepDecay(_EpochDecay):
    """``learning_rate * decay_rate ** (epoch // step_size)``."""

    def __init__(self, learning_rate: float, step_size: int, decay_rate: float = 0.1) -> None:
        if isinstance(step_size, bool) or not isinstance(step_size, int) or step_size <= 0:
            raise ArgumentTypeError(
                "StepDecay", f"step_size must be a positive int, given {step_size!r}"
            )
        self.decay_rate = _decay_rate("StepDecay", decay_rate)
        self._step_every = step_size
        super().__init__(learning_rate)
        self.step_size = step_size  # Fluid's attribute name

    def get_lr(self) -> float:
        return self.base_lr * self.decay_rate ** (self.epoch_num // self._step_every)


class MultiStepDecay(_EpochDecay):
    """``learning_rate * decay_rate ** (number of milestones <= epoch)``."""

    def __init__(self, learning_rate: float, milestones: Any, decay_rate: float = 0.1) -> None:
        if not isinstance(milestones, (list, tuple)) or not all(
            isinstance(m, int) and not isinstance(m, bool) for m in milestones
        ):
            raise ArgumentTypeError(
                "MultiStepDecay", f"milestones must be a list of ints, given {milestones!r}"
            )
        if any(b <= a for a, b in zip(milestones, milestones[1:])):
            raise ArgumentError(
                "MultiStepDecay", f"milestones must increase, given {list(milestones)}"
            )
        self.milestones = list(milestones)
        self.decay_rate = _decay_rate("MultiStepDecay", decay_rate)
        super().__init__(learning_rate)

    def get_lr(self) -> float:
        passed = sum(1 for m in self.milestones if self.epoch_num >= m)
        return self.base_lr * self.decay_rate**passed


class LambdaDecay(_EpochDecay):
    """``learning_rate * lr_lambda(epoch)``."""

    def __init__(self, learning_rate: float, lr_lambda: Callable[[int], float]) -> None:
        if not callable(lr_lambda):
            raise ArgumentTypeError(
                "LambdaDecay", f"lr_lambda must be a function, given {lr_lambda!r}"
            )
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate)

    def get_lr(self) -> float:
        return self.base_lr * self.lr_lambda(self.epoch_num)
