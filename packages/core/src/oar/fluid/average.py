"""``fluid.average.WeightedAverage``: a running weighted mean of Python or numpy values."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["WeightedAverage"]


def _is_number_or_matrix(value: Any) -> bool:
    return isinstance(value, (int, float, np.number, np.ndarray)) and not isinstance(value, bool)


class WeightedAverage:
    """``add(value, weight)`` values, then ``eval()`` their weighted mean; ``reset()`` starts over."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.numerator = None
        self.denominator = None

    def add(self, value: Any, weight: Any) -> None:
        if not _is_number_or_matrix(value):
            raise ValueError("The 'value' must be a number(int, float) or a numpy ndarray.")
        if not _is_number_or_matrix(weight):
            raise ValueError("The 'weight' must be a number(int, float) or a numpy ndarray.")
        if self.numerator is None or self.denominator is None:
            self.numerator = value * weight
            self.denominator = weight
        else:
            self.numerator = self.numerator + value * weight
            self.denominator = self.denominator + weight

    def eval(self) -> Any:
        if self.numerator is None or self.denominator is None:
            raise ValueError("There is no data to be averaged in WeightedAverage.")
        return self.numerator / self.denominator
