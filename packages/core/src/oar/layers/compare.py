"""Comparison and logical layers (bool results, no gradient)."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable

__all__ = [
    "less_than",
    "less_equal",
    "greater_than",
    "greater_equal",
    "equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
]


def _compare(op: str, x: Any, y: Any, cond: Any, force_cpu: bool | None = None) -> Any:
    helper = LayerHelper(op)
    check_variable(op, "x", x)
    check_variable(op, "y", y)
    if cond is None:
        cond = helper.create_variable_for_type_inference("bool")
    else:
        check_variable(op, "cond", cond)
    attrs = {"force_cpu": bool(force_cpu)} if force_cpu is not None else {}
    helper.append_op(op, {"X": [x], "Y": [y]}, {"Out": [cond]}, attrs)
    cond.stop_gradient = True
    return cond


def less_than(x, y, force_cpu=None, cond=None):
    """x < y elementwise (bool)."""
    return _compare("less_than", x, y, cond, force_cpu)


def less_equal(x, y, cond=None):
    return _compare("less_equal", x, y, cond)


def greater_than(x, y, cond=None):
    return _compare("greater_than", x, y, cond)


def greater_equal(x, y, cond=None):
    return _compare("greater_equal", x, y, cond)


def equal(x, y, cond=None):
    return _compare("equal", x, y, cond)


def not_equal(x, y, cond=None):
    return _compare("not_equal", x, y, cond)


def _logical(op: str, x: Any, y: Any = None, out: Any = None, name: str | None = None) -> Any:
    helper = LayerHelper(op, name=name)
    check_variable(op, "x", x)
    inputs = {"X": [x]}
    if y is not None or op != "logical_not":
        check_variable(op, "y", y)
        inputs["Y"] = [y]
    if out is None:
        out = helper.create_variable_for_type_inference("bool")
    helper.append_op(op, inputs, {"Out": [out]})
    out.stop_gradient = True
    return out


def logical_and(x, y, out=None, name=None):
    """x AND y for bool tensors."""
    return _logical("logical_and", x, y, out, name)


def logical_or(x, y, out=None, name=None):
    return _logical("logical_or", x, y, out, name)


def logical_xor(x, y, out=None, name=None):
    return _logical("logical_xor", x, y, out, name)


def logical_not(x, out=None, name=None):
    return _logical("logical_not", x, None, out, name)
