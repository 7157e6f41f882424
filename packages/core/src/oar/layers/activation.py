"""Activation layers: relu, sigmoid, tanh, softmax, ... each a thin op wrapper."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable

__all__ = ["relu", "sigmoid", "tanh", "exp", "sqrt", "rsqrt", "reciprocal", "square", "abs", "log",
           "sin", "cos", "softsign", "softplus", "sign", "softmax"]


def _unary(op_type: str, x: Any, name: str | None = None, attrs: dict | None = None) -> Any:
    helper = LayerHelper(op_type, name=name)
    check_variable(op_type, "x", x)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(op_type, {"X": [x]}, {"Out": [out]}, attrs or {})
    return out


def relu(x, name=None):
    """max(x, 0)."""
    return _unary("relu", x, name)


def sigmoid(x, name=None):
    return _unary("sigmoid", x, name)


def tanh(x, name=None):
    return _unary("tanh", x, name)


def exp(x, name=None):
    return _unary("exp", x, name)


def sqrt(x, name=None):
    return _unary("sqrt", x, name)


def rsqrt(x, name=None):
    return _unary("rsqrt", x, name)


def reciprocal(x, name=None):
    return _unary("reciprocal", x, name)


def square(x, name=None):
    return _unary("square", x, name)


def abs(x, name=None):  # noqa: A001 - Fluid's name
    return _unary("abs", x, name)


def log(x, name=None):
    return _unary("log", x, name)


def sin(x, name=None):
    return _unary("sin", x, name)


def cos(x, name=None):
    return _unary("cos", x, name)


def softsign(x, name=None):
    return _unary("softsign", x, name)


def softplus(x, name=None):
    return _unary("softplus", x, name)


def sign(x, name=None):
    return _unary("sign", x, name)


def softmax(input: Any, use_cudnn: bool = False, name: str | None = None, axis: int = -1) -> Any:
    """Softmax along ``axis``."""
    return _unary("softmax", input, name, {"axis": axis, "use_cudnn": use_cudnn})
