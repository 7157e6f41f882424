"""Clipping layers: clip (by value), clip_by_norm, l2_normalize (op norm)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["clip", "clip_by_norm", "l2_normalize"]


def _number(layer: str, arg: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ArgumentTypeError(layer, f"{arg} must be a number, given {v!r}")
    return float(v)


def clip(x: Any, min: float, max: float, name: str | None = None) -> Any:  # Fluid's names
    """Clamp every element into [min, max]."""
    helper = LayerHelper("clip", name=name)
    check_variable("clip", "x", x)
    lo, hi = _number("clip", "min", min), _number("clip", "max", max)
    if lo > hi:
        raise ArgumentError("clip", f"min ({lo}) must not exceed max ({hi})")
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("clip", {"X": [x]}, {"Out": [out]}, {"min": lo, "max": hi})
    return out


def clip_by_norm(x: Any, max_norm: float, name: str | None = None) -> Any:
    """Scale ``x`` down so its L2 norm is at most ``max_norm``."""
    helper = LayerHelper("clip_by_norm", name=name)
    check_variable("clip_by_norm", "x", x)
    m = _number("clip_by_norm", "max_norm", max_norm)
    if m <= 0:
        raise ArgumentError("clip_by_norm", f"max_norm must be > 0, given {max_norm}")
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("clip_by_norm", {"X": [x]}, {"Out": [out]}, {"max_norm": m})
    return out


def l2_normalize(x: Any, axis: int, epsilon: float = 1e-12, name: str | None = None) -> Any:
    """``x / sqrt(sum(x^2, axis) + epsilon)``."""
    helper = LayerHelper("l2_normalize", name=name)
    check_variable("l2_normalize", "x", x)
    rank = len(x.shape)
    if rank == 1:
        axis = 0
    if not isinstance(axis, int) or isinstance(axis, bool) or not -rank <= axis < rank:
        raise ArgumentError(
            "l2_normalize", f"axis must be an int in [-{rank}, {rank}), given {axis!r}"
        )
    out = helper.create_variable_for_type_inference(x.dtype)
    norm = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "norm",
        {"X": [x]},
        {"Out": [out], "Norm": [norm]},
        {"axis": axis, "epsilon": _number("l2_normalize", "epsilon", epsilon)},
    )
    return out
