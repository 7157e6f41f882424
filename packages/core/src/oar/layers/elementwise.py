"""Elementwise layers: elementwise_add, _sub, _mul, _div, _max, _min, _pow, _mod, _floordiv."""

from __future__ import annotations

from typing import Any

from oar.framework.mode import current_builder
from oar.layer_helper import LayerHelper, check_variable

__all__ = [
    "elementwise_add",
    "elementwise_sub",
    "elementwise_mul",
    "elementwise_div",
    "elementwise_max",
    "elementwise_min",
    "elementwise_pow",
    "elementwise_mod",
    "elementwise_floordiv",
]


def check_same_dtype(layer: str, args: dict) -> None:
    """Raise DtypeError if the named Variables differ in dtype, where the builder must check.

    Static programs get this from the ops' shape inference; eager kernels would let
    numpy upcast silently, which Fluid 1.8 rejects ("Tensor holds the wrong type").
    """
    current_builder().check_same_dtype(layer, args)


def _elementwise(
    op_type: str, x: Any, y: Any, axis: int = -1, act: Any = None, name: str | None = None
) -> Any:
    helper = LayerHelper(op_type, act=act, name=name)
    check_variable(op_type, "x", x)
    check_variable(op_type, "y", y)
    check_same_dtype(op_type, {"x": x, "y": y})
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(op_type, {"X": [x], "Y": [y]}, {"Out": [out]}, {"axis": axis})
    return helper.append_activation(out)


def elementwise_add(x, y, axis=-1, act=None, name=None):
    """x + y, with ``y`` broadcast from dim ``axis`` of ``x`` (Fluid's rule)."""
    return _elementwise("elementwise_add", x, y, axis, act, name)


def elementwise_sub(x, y, axis=-1, act=None, name=None):
    return _elementwise("elementwise_sub", x, y, axis, act, name)


def elementwise_mul(x, y, axis=-1, act=None, name=None):
    return _elementwise("elementwise_mul", x, y, axis, act, name)


def elementwise_div(x, y, axis=-1, act=None, name=None):
    return _elementwise("elementwise_div", x, y, axis, act, name)


def elementwise_max(x, y, axis=-1, act=None, name=None):
    return _elementwise("elementwise_max", x, y, axis, act, name)


def elementwise_min(x, y, axis=-1, act=None, name=None):
    return _elementwise("elementwise_min", x, y, axis, act, name)


def elementwise_pow(x, y, axis=-1, act=None, name=None):
    return _elementwise("elementwise_pow", x, y, axis, act, name)


def elementwise_mod(x, y, axis=-1, act=None, name=None):
    return _elementwise("elementwise_mod", x, y, axis, act, name)


def elementwise_floordiv(x, y, axis=-1, act=None, name=None):
    return _elementwise("elementwise_floordiv", x, y, axis, act, name)
