"""Search and scan layers: argmax, argmin, argsort, where, cumsum."""

from __future__ import annotations

from typing import Any

import numpy as np

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["argmax", "argmin", "argsort", "where", "cumsum"]


def _check_axis(layer: str, x: Any, axis: Any) -> None:
    rank = len(x.shape)
    if not isinstance(axis, int) or isinstance(axis, bool) or not -rank <= axis < max(rank, 1):
        raise ArgumentError(
            layer,
            f"axis must be an int in [-{rank}, {rank}) for x of shape {list(x.shape)}, "
            f"given {axis!r}",
        )


def _arg(op: str, layer: str, x: Any, axis: int) -> Any:
    helper = LayerHelper(op)
    check_variable(layer, "x", x)
    _check_axis(layer, x, axis)
    out = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op(op, {"X": [x]}, {"Out": [out]}, {"axis": axis})
    out.stop_gradient = True
    return out


def argmax(x: Any, axis: int = 0) -> Any:
    """int64 index of the largest value along ``axis`` (that dim dropped)."""
    return _arg("arg_max", "argmax", x, axis)


def argmin(x: Any, axis: int = 0) -> Any:
    """int64 index of the smallest value along ``axis`` (that dim dropped)."""
    return _arg("arg_min", "argmin", x, axis)


def argsort(input: Any, axis: int = -1, descending: bool = False, name: str | None = None) -> tuple:
    """(sorted values, int64 indices) along ``axis``; ties keep their order."""
    helper = LayerHelper("argsort", name=name)
    check_variable("argsort", "input", input)
    _check_axis("argsort", input, axis)
    if not isinstance(descending, (bool, np.bool_)):
        raise ArgumentTypeError(
            "argsort",
            f"descending must be a bool, given {type(descending).__name__} {descending!r}",
        )
    out = helper.create_variable_for_type_inference(input.dtype)
    ids = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op(
        "argsort",
        {"X": [input]},
        {"Out": [out], "Indices": [ids]},
        {"axis": axis, "descending": bool(descending)},
    )
    ids.stop_gradient = True
    return out, ids


def where(condition: Any) -> Any:
    """int64 coordinates [N, rank] of the True entries of a bool tensor."""
    helper = LayerHelper("where_index")
    check_variable("where", "condition", condition)
    if condition.dtype != "bool":
        raise ArgumentTypeError(
            "where", f"condition '{condition.name}' must be a bool tensor, given {condition.dtype}"
        )
    out = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op("where_index", {"Condition": [condition]}, {"Out": [out]})
    out.stop_gradient = True
    return out


def cumsum(
    x: Any, axis: int | None = None, exclusive: bool | None = None, reverse: bool | None = None
) -> Any:
    """Running sum along ``axis`` (default the last); ``exclusive`` skips the own element, ``reverse`` runs backward."""
    helper = LayerHelper("cumsum")
    check_variable("cumsum", "x", x)
    attrs: dict = {}
    if axis is not None:
        _check_axis("cumsum", x, axis)
        attrs["axis"] = axis
    if exclusive is not None:
        attrs["exclusive"] = bool(exclusive)
    if reverse is not None:
        attrs["reverse"] = bool(reverse)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("cumsum", {"X": [x]}, {"Out": [out]}, attrs)
    return out
