"""Reduction layers: reduce_sum/mean/max/min/prod/all/any (``dim`` None reduces everything)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = [
    "reduce_sum",
    "reduce_mean",
    "reduce_max",
    "reduce_min",
    "reduce_prod",
    "reduce_all",
    "reduce_any",
]


def _reduce(op: str, input: Any, dim: Any, keep_dim: bool, name: str | None) -> Any:
    helper = LayerHelper(op, name=name)
    check_variable(op, "input", input)
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        dims, reduce_all = [0], True
    else:
        dims = list(dim) if isinstance(dim, (list, tuple)) else [dim]
        if not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
            raise ArgumentTypeError(op, f"dim must be an int or a list of ints, given {dim!r}")
        reduce_all = len(dims) == len(input.shape) and len(
            {d % max(len(input.shape), 1) for d in dims}
        ) == len(dims)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        op,
        {"X": [input]},
        {"Out": [out]},
        {"dim": dims, "keep_dim": bool(keep_dim), "reduce_all": reduce_all},
    )
    return out


def reduce_sum(input: Any, dim: Any = None, keep_dim: bool = False, name: str | None = None) -> Any:
    """Sum over ``dim`` (an int or list; None = all dims)."""
    return _reduce("reduce_sum", input, dim, keep_dim, name)


def reduce_mean(
    input: Any, dim: Any = None, keep_dim: bool = False, name: str | None = None
) -> Any:
    """Mean over ``dim`` (an int or list; None = all dims)."""
    return _reduce("reduce_mean", input, dim, keep_dim, name)


def reduce_max(input: Any, dim: Any = None, keep_dim: bool = False, name: str | None = None) -> Any:
    return _reduce("reduce_max", input, dim, keep_dim, name)


def reduce_min(input: Any, dim: Any = None, keep_dim: bool = False, name: str | None = None) -> Any:
    return _reduce("reduce_min", input, dim, keep_dim, name)


def reduce_prod(
    input: Any, dim: Any = None, keep_dim: bool = False, name: str | None = None
) -> Any:
    return _reduce("reduce_prod", input, dim, keep_dim, name)


def reduce_all(input: Any, dim: Any = None, keep_dim: bool = False, name: str | None = None) -> Any:
    """Logical AND over ``dim`` of a bool tensor."""
    return _reduce("reduce_all", input, dim, keep_dim, name)


def reduce_any(input: Any, dim: Any = None, keep_dim: bool = False, name: str | None = None) -> Any:
    """Logical OR over ``dim`` of a bool tensor."""
    return _reduce("reduce_any", input, dim, keep_dim, name)
