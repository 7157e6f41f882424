"""numpy kernels for unary activations and their gradients."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel


def _unary(op_type, fn, dtypes=FLOATS):
    kernel(op_type, dtypes)(lambda inputs, attrs: {"Out": fn(inputs["X"])})


def _sigmoid(x):
    return np.exp(-np.logaddexp(0, -x)).astype(x.dtype, copy=False)


def _softplus(x):
    return np.logaddexp(0, x).astype(x.dtype, copy=False)


_unary("relu", lambda x: np.maximum(x, 0))
_unary("sigmoid", _sigmoid)
_unary("tanh", np.tanh)
_unary("exp", np.exp)
_unary("sqrt", np.sqrt)
_unary("rsqrt", lambda x: 1 / np.sqrt(x))
_unary("reciprocal", lambda x: 1 / x)
_unary("square", np.square, None)
_unary("abs", np.abs, None)
_unary("log", np.log)
_unary("sin", np.sin)
_unary("cos", np.cos)
_unary("softsign", lambda x: x / (1 + np.abs(x)))
_unary("softplus", _softplus)
_unary("sign", np.sign, None)


def _grad_out(op_type, fn):
    kernel(op_type + "_grad", FLOATS)(
        lambda inputs, attrs: {"X@GRAD": fn(inputs["Out"], inputs["Out@GRAD"])}
    )


def _grad_x(op_type, fn, dtypes=FLOATS):
    kernel(op_type + "_grad", dtypes)(
        lambda inputs, attrs: {"X@GRAD": fn(inputs["X"], inputs["Out@GRAD"])}
    )


_grad_out("relu", lambda y, d: d * (y > 0))
_grad_out("sigmoid", lambda y, d: d * y * (1 - y))
_grad_out("tanh", lambda y, d: d * (1 - y * y))
_grad_out("exp", lambda y, d: d * y)
_grad_out("sqrt", lambda y, d: d * 0.5 / y)
_grad_out("rsqrt", lambda y, d: d * -0.5 * y * y * y)
_grad_out("reciprocal", lambda y, d: d * -(y * y))
_grad_x("square", lambda x, d: d * 2 * x, None)
_grad_x("abs", lambda x, d: d * np.sign(x), None)
_grad_x("log", lambda x, d: d / x)
_grad_x("sin", lambda x, d: d * np.cos(x))
_grad_x("cos", lambda x, d: -d * np.sin(x))
_grad_x("softsign", lambda x, d: d / np.square(1 + np.abs(x)))
_grad_x("softplus", lambda x, d: d * _sigmoid(x))
