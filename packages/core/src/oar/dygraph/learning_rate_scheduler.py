"""Dygraph learning-rate schedules (Fluid 1.8 formulas), stepped once per ``minimize``.

Calling a schedule returns the rate for the current step and advances
``step_num`` by ``step_size``; ``state_dict()`` / ``set_dict()`` carry
``step_num`` so a resumed run continues the schedule exactly.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "LearningRateDecay",
    "PiecewiseDecay",
    "NaturalExpDecay",
    "ExponentialDecay",
    "InverseTimeDecay",
    "PolynomialDecay",
    "CosineDecay",
    "NoamDecay",
    "LinearLrWarmup",
    "ReduceLROnPlateau",
]


class LearningRateDecay:
    """Base class: subclasses implement ``step()`` -> the rate (a float) at ``self.step_num``."""

    _state_keys = ("step_num",)

    def __init__(self, begin: int = 0, step: int = 1, dtype: str = "float32") -> None:
        self.step_num = begin
        self.step_size = step
        self.dtype = dtype

    def __call__(self) -> float:
        lr = self.step()
        self.step_num += self.step_size
        return float(lr)

    def step(self) -> float:
        raise NotImplementedError

    def create_lr_var(self, lr: float) -> Any:
        from oar.dygraph.varbase import VarBase
        from oar.framework.mode import _dygraph_tracer

        value = np.array([lr], dtype=self.dtype)
        tracer = _dygraph_tracer()
        return VarBase(tracer.to_device(value) if tracer else value, stop_gradient=True)

    def state_dict(self) -> dict:
        return {k: getattr(self, k) for k in self._state_keys}

    def set_dict(self, state_dict: dict) -> None:
        for k in self._state_keys:
            if k in state_dict:
                v = state_dict[k]
                setattr(self, k, v.item() if hasattr(v, "item") else v)

    set_state_dict = set_dict


class PiecewiseDecay(LearningRateDecay):
    """``values[i]`` while ``step_num < boundaries[i]``, then ``values[-1]``."""

    def __init__(
        self, boundaries: list, values: list, begin: int, step: int = 1, dtype: str = "float32"
    ) -> None:
        super().__init__(begin, step, dtype)
        if len(values) != len(boundaries) + 1:
            raise ValueError(
                f"PiecewiseDecay: len(values) must be len(boundaries) + 1, given "
                f"{len(values)} values for {len(boundaries)} boundaries"
            )
        self.boundaries, self.vars = list(boundaries), [float(v) for v in values]

    def step(self) -> float:
        for b, v in zip(self.boundaries, self.vars):
            if self.step_num < b:
                return v
        return self.vars[-1]


class _DivDecay(LearningRateDecay):
    def __init__(
        self,
        learning_rate: float,
        decay_steps: int,
        decay_rate: float,
        staircase: bool = False,
        begin: int = 0,
        step: int = 1,
        dtype: str = "float32",
    ) -> None:
        super().__init__(begin, step, dtype)
        if decay_steps <= 0:
            raise ValueError(f"{type(self).__name__}: decay_steps must be > 0, given {decay_steps}")
        self.learning_rate, self.decay_steps = float(learning_rate), decay_steps
        self.decay_rate, self.staircase = float(decay_rate), staircase

    def _div(self) -> float:
        d = self.step_num / self.decay_steps
        return math.floor(d) if self.staircase else d


class NaturalExpDecay(_DivDecay):
    """``lr * exp(-decay_rate * step / decay_steps)``."""

    def step(self) -> float:
        return self.learning_rate * math.exp(-self.decay_rate * self._div())


class ExponentialDecay(_DivDecay):
    """``lr * decay_rate ** (step / decay_steps)``."""

    def step(self) -> float:
        return self.learning_rate * self.decay_rate ** self._div()


class InverseTimeDecay(_DivDecay):
    """``lr / (1 + decay_rate * step / decay_steps)``."""

    def step(self) -> float:
        return self.learning_rate / (1 + self.decay_rate * self._div())


class PolynomialDecay(LearningRateDecay):
    """``(lr - end) * (1 - step / decay_steps) ** power + end``, optionally cycling."""

    def __init__(
        self,
        learning_rate: float,
        decay_steps: int,
        end_learning_rate: float = 0.0001,
        power: float = 1.0,
        cycle: bool = False,
        begin: int = 0,
        step: int = 1,
        dtype: str = "float32",
    ) -> None:
        super().__init__(begin, step, dtype)
        if decay_steps <= 0:
            raise ValueError(f"PolynomialDecay: decay_steps must be > 0, given {decay_steps}")
        self.learning_rate, self.decay_steps = float(learning_rate), decay_steps
        self.end_learning_rate, self.power, self.cycle = (
            float(end_learning_rate),
            float(power),
            cycle,
        )

    def step(self) -> float:
        n, steps = self.step_num, self.decay_steps
        if self.cycle:
            div = math.ceil(n / steps) if n else 1
            steps = steps * div
        else:
            n = min(n, steps)
        return (self.learning_rate - self.end_learning_rate) * (
            1 - n / steps
        ) ** self.power + self.end_learning_rate


class CosineDecay(LearningRateDecay):
    """``lr * 0.5 * (cos(epoch * pi / epochs) + 1)`` with ``epoch = floor(step / step_each_epoch)``."""

    def __init__(
        self,
        learning_rate: float,
        step_each_epoch: int,
        epochs: int,
        begin: int = 0,
        step: int = 1,
        dtype: str = "float32",
    ) -> None:
        super().__init__(begin, step, dtype)
        self.learning_rate, self.step_each_epoch, self.epochs = (
            float(learning_rate),
            step_each_epoch,
            epochs,
        )

    def step(self) -> float:
        epoch = math.floor(self.step_num / self.step_each_epoch)
        return self.learning_rate * 0.5 * (math.cos(epoch * math.pi / self.epochs) + 1)


class NoamDecay(LearningRateDecay):
    """``lr * d_model ** -0.5 * min(step ** -0.5, warmup_steps ** -1.5 * step)`` (Transformer)."""

    def __init__(
        self,
        d_model: int,
        warmup_steps: int,
        begin: int = 1,
        step: int = 1,
        dtype: str = "float32",
        learning_rate: float = 1.0,
    ) -> None:
        super().__init__(begin, step, dtype)
        self.d_model, self.warmup_steps, self.learning_rate = (
            d_model,
            warmup_steps,
            float(learning_rate),
        )

    def step(self) -> float:
        n = max(self.step_num, 1e-12)
        return self.learning_rate * self.d_model**-0.5 * min(n**-0.5, self.warmup_steps**-1.5 * n)


class LinearLrWarmup(LearningRateDecay):
    """Linear ramp from ``start_lr`` to ``end_lr`` over ``warmup_steps``, then ``learning_rate``
    (a float or another schedule, which advances on every step, warm-up included, as in Fluid)."""

    def __init__(
        self,
        learning_rate: Any,
        warmup_steps: int,
        start_lr: float,
        end_lr: float,
        begin: int = 1,
        step: int = 1,
        dtype: str = "float32",
    ) -> None:
        super().__init__(begin, step, dtype)
        if not isinstance(learning_rate, (float, int, LearningRateDecay)):
            raise TypeError(
                f"LinearLrWarmup: learning_rate must be a float or a LearningRateDecay, "
                f"given {type(learning_rate).__name__}"
            )
        if end_lr <= start_lr:
            raise ValueError(
                f"LinearLrWarmup: end_lr ({end_lr}) must be greater than start_lr ({start_lr})"
            )
        self.learning_rate, self.warmup_steps = learning_rate, warmup_steps
        self.start_lr, self.end_lr = float(start_lr), float(end_lr)
        self.lr_ratio_before_warmup = (self.end_lr - self.start_lr) / warmup_steps

    def step(self) -> float:
        base = (
            self.learning_rate()
            if isinstance(self.learning_rate, LearningRateDecay)
            else self.learning_rate
        )
        if self.step_num < self.warmup_steps:
            return self.lr_ratio_before_warmup * self.step_num + self.start_lr
        return float(base)

    def state_dict(self) -> dict:
        d = super().state_dict()
        if isinstance(self.learning_rate, LearningRateDecay):
            d["learning_rate"] = self.learning_rate.state_dict()
        return d

    def set_dict(self, state_dict: dict) -> None:
        super().set_dict(state_dict)
        if isinstance(self.learning_rate, LearningRateDecay) and "learning_rate" in state_dict:
            self.learning_rate.set_dict(state_dict["learning_rate"])


class ReduceLROnPlateau(LearningRateDecay):
    """Multiply the rate by ``decay_rate`` when ``step(loss)`` sees no improvement for ``patience`` calls.

    Epoch-driven: ``minimize`` does not advance it; call ``step(loss)`` once per epoch.
    """

    _state_keys = ("cooldown_counter", "best_loss", "num_bad_epochs", "epoch_num", "learning_rate")

    def __init__(
        self,
        learning_rate: float,
        mode: str = "min",
        decay_rate: float = 0.1,
        patience: int = 10,
        verbose: bool = False,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float = 0,
        eps: float = 1e-8,
        dtype: str = "float32",
    ) -> None:
        super().__init__(0, 1, dtype)
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', given {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(
                f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', given {threshold_mode!r}"
            )
        if decay_rate >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: decay_rate must be < 1.0, given {decay_rate}")
        self.learning_rate = float(learning_rate)
        self.mode, self.decay_rate, self.patience, self.verbose = (
            mode,
            float(decay_rate),
            patience,
            verbose,
        )
        self.threshold, self.threshold_mode, self.cooldown = threshold, threshold_mode, cooldown
        self.min_lr, self.eps = float(min_lr), eps
        self.cooldown_counter = 0
        self.best_loss = None
        self.num_bad_epochs = 0
        self.epoch_num = 0

    def __call__(self) -> float:
        return self.learning_rate

    def step(self, loss: Any = None) -> float:  # type: ignore[override]
        if loss is None:
            return self.learning_rate
        value = float(np.asarray(loss.numpy() if hasattr(loss, "numpy") else loss).reshape(-1)[0])
        self.epoch_num += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
        elif self.best_loss is None or self._better(value, self.best_loss):
            self.best_loss = value
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.num_bad_epochs > self.patience:
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
            new_lr = max(self.learning_rate * self.decay_rate, self.min_lr)
            if self.learning_rate - new_lr > self.eps:
                if self.verbose:
                    print(
                        f"Epoch {self.epoch_num}: reducing learning rate from {self.learning_rate} to {new_lr}."
                    )
                self.learning_rate = new_lr
        return self.learning_rate

    def _better(self, current: float, best: float) -> bool:
        if self.mode == "min":
            return (
                (current < best - best * self.threshold)
                if self.threshold_mode == "rel"
                else current < best - self.threshold
            )
        return (
            (current > best + best * self.threshold)
            if self.threshold_mode == "rel"
            else current > best + self.threshold
        )
