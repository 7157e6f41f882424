"""Argument checks shared by the optimizers: clear errors naming the optimizer and the argument."""

from __future__ import annotations

from typing import Any


def check_float(
    opt: str,
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``value`` as a float within [low, high] (open ends where asked), else ValueError/TypeError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{opt}: {name} must be a float, given {type(value).__name__} {value!r}")
    v = float(value)
    bad_low = low is not None and (v <= low if low_open else v < low)
    bad_high = high is not None and (v >= high if high_open else v > high)
    if bad_low or bad_high:
        lo = "-inf" if low is None else f"{low}"
        hi = "inf" if high is None else f"{high}"
        rng = f"{'(' if low_open or low is None else '['}{lo}, {hi}{')' if high_open or high is None else ']'}"
        raise ValueError(f"{opt}: {name} must be in {rng}, given {value}")
    return v
