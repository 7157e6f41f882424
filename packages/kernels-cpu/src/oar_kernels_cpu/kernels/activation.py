"""numpy kernels for unary activations and their gradients."""

from __future__ import annotations

import math

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel


def _unary(op_type, fn, dtypes=FLOATS):
    if isinstance(fn, np.ufunc) or fn is _sigmoid:
        # same-dtype elementwise maps: a dying float input can hold the result
        def unary(inputs, attrs, donated=frozenset()):
            x = inputs["X"]
            if "X" in donated and x.dtype.kind == "f":
                return {"Out": fn(x, out=x)}
            return {"Out": fn(x)}

        kernel(op_type, dtypes, inplace=True)(unary)
    else:
        kernel(op_type, dtypes)(lambda inputs, attrs: {"Out": fn(inputs["X"])})


def _sigmoid(x, out=None):
    t = np.negative(x, out=out)
    np.logaddexp(0, t, out=t)
    np.negative(t, out=t)
    return np.exp(t, out=t).astype(x.dtype, copy=False)


def _softplus(x):
    return np.logaddexp(0, x).astype(x.dtype, copy=False)


@kernel("relu", FLOATS, inplace=True)
def relu(inputs, attrs, donated=frozenset()):
    x = inputs["X"]
    return {"Out": np.maximum(x, 0, out=x if "X" in donated else None)}


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


@kernel("relu_grad", FLOATS, inplace=True)
def relu_grad(inputs, attrs, donated=frozenset()):
    y, d = inputs["Out"], inputs["Out@GRAD"]
    return {"X@GRAD": np.multiply(d, y > 0, out=d if "Out@GRAD" in donated else None)}


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


# --- logsigmoid, tanh_shrink, piecewise-constant --------------------------------------------
_unary("logsigmoid", lambda x: -np.logaddexp(0, -x).astype(x.dtype, copy=False))
_unary("tanh_shrink", lambda x: x - np.tanh(x))
_grad_x("logsigmoid", lambda x, d: d * _sigmoid(-x))
_grad_x("tanh_shrink", lambda x, d: d * np.square(np.tanh(x)))
for _name, _fn in (("floor", np.floor), ("ceil", np.ceil), ("round", np.round)):
    _unary(_name, _fn)
    _grad_x(_name, lambda x, d: np.zeros_like(d))


# --- parametric activations: forward f(x, attrs), grad g(x, out, d, attrs) ------------------
_SQRT_2_PI = math.sqrt(2.0 / math.pi)


def erf(x: np.ndarray) -> np.ndarray:
    """erf via Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7: float32 precision), vectorised."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return (sign * (1.0 - poly * np.exp(-a * a))).astype(x.dtype, copy=False)


def _gelu(x, a):
    if a["approximate"]:
        return 0.5 * x * (1 + np.tanh(_SQRT_2_PI * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def _gelu_grad(x, out, d, a):
    if a["approximate"]:
        inner = _SQRT_2_PI * (x + 0.044715 * x**3)
        t = np.tanh(inner)
        return d * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _SQRT_2_PI * (1 + 3 * 0.044715 * x * x))
    return d * (
        0.5 * (1 + erf(x / math.sqrt(2))) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    )


def _hard_swish(x, a):
    return x * np.clip(x + a["offset"], 0, a["threshold"]) / a["scale"]


def _hard_swish_grad(x, out, d, a):
    z = x + a["offset"]
    g = np.where(
        z <= 0,
        0.0,
        np.where(
            z >= a["threshold"], a["threshold"] / a["scale"], (2 * x + a["offset"]) / a["scale"]
        ),
    )
    return d * g.astype(x.dtype, copy=False)


def _soft_relu(x, a):
    t = a["threshold"]
    return np.logaddexp(0, np.clip(x, -t, t)).astype(x.dtype, copy=False)


_PARAMETRIC = {
    "leaky_relu": (
        lambda x, a: np.where(x > 0, x, x * a["alpha"]),
        lambda x, o, d, a: d * np.where(x > 0, 1.0, a["alpha"]).astype(x.dtype),
    ),
    "elu": (
        lambda x, a: np.where(x > 0, x, a["alpha"] * np.expm1(np.minimum(x, 0))),
        lambda x, o, d, a: (
            d * np.where(x > 0, 1.0, a["alpha"] * np.exp(np.minimum(x, 0))).astype(x.dtype)
        ),
    ),
    "relu6": (
        lambda x, a: np.clip(x, 0, a["threshold"]),
        lambda x, o, d, a: d * ((x > 0) & (x < a["threshold"])),
    ),
    "brelu": (
        lambda x, a: np.clip(x, a["t_min"], a["t_max"]),
        lambda x, o, d, a: d * ((x > a["t_min"]) & (x < a["t_max"])),
    ),
    "soft_relu": (
        _soft_relu,
        lambda x, o, d, a: (
            d * _sigmoid(np.clip(x, -a["threshold"], a["threshold"])) * (np.abs(x) < a["threshold"])
        ),
    ),
    "swish": (
        lambda x, a: x * _sigmoid(a["beta"] * x),
        lambda x, o, d, a: d * (lambda s: s + a["beta"] * x * s * (1 - s))(_sigmoid(a["beta"] * x)),
    ),
    "gelu": (_gelu, _gelu_grad),
    "hard_sigmoid": (
        lambda x, a: np.clip(a["slope"] * x + a["offset"], 0, 1),
        lambda x, o, d, a: (
            d
            * a["slope"]
            * ((a["slope"] * x + a["offset"] > 0) & (a["slope"] * x + a["offset"] < 1))
        ),
    ),
    "hard_swish": (_hard_swish, _hard_swish_grad),
    "selu": (
        lambda x, a: a["scale"] * np.where(x > 0, x, a["alpha"] * np.expm1(np.minimum(x, 0))),
        lambda x, o, d, a: (
            d
            * a["scale"]
            * np.where(x > 0, 1.0, a["alpha"] * np.exp(np.minimum(x, 0))).astype(x.dtype)
        ),
    ),
    "stanh": (
        lambda x, a: a["scale_b"] * np.tanh(a["scale_a"] * x),
        lambda x, o, d, a: (
            d * a["scale_a"] * a["scale_b"] * (1 - np.square(np.tanh(a["scale_a"] * x)))
        ),
    ),
    "thresholded_relu": (
        lambda x, a: np.where(x > a["threshold"], x, 0).astype(x.dtype, copy=False),
        lambda x, o, d, a: d * (x > a["threshold"]),
    ),
    "softshrink": (
        lambda x, a: np.where(
            x > a["lambda"], x - a["lambda"], np.where(x < -a["lambda"], x + a["lambda"], 0)
        ).astype(x.dtype, copy=False),
        lambda x, o, d, a: d * (np.abs(x) > a["lambda"]),
    ),
    "hard_shrink": (
        lambda x, a: np.where(np.abs(x) > a["threshold"], x, 0).astype(x.dtype, copy=False),
        lambda x, o, d, a: d * (np.abs(x) > a["threshold"]),
    ),
}


def _register_parametric(name, fwd, bwd):
    kernel(name, FLOATS)(
        lambda inputs, attrs: {"Out": fwd(inputs["X"], attrs).astype(inputs["X"].dtype, copy=False)}
    )
    kernel(name + "_grad", FLOATS)(
        lambda inputs, attrs: {
            "X@GRAD": bwd(inputs["X"], inputs.get("Out"), inputs["Out@GRAD"], attrs).astype(
                inputs["X"].dtype, copy=False
            )
        }
    )


for _name, (_fwd, _bwd) in _PARAMETRIC.items():
    _register_parametric(_name, _fwd, _bwd)


def _factor(inputs, attrs):
    ft = inputs.get("FactorTensor")
    return float(np.asarray(ft).reshape(-1)[0]) if ft is not None else attrs["factor"]


@kernel("pow", FLOATS)
def pow_(inputs, attrs):
    x = inputs["X"]
    return {"Out": np.power(x, np.asarray(_factor(inputs, attrs), x.dtype))}


@kernel("pow_grad", FLOATS)
def pow_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    f = np.asarray(_factor(inputs, attrs), x.dtype)
    return {"X@GRAD": d * f * np.power(x, f - 1)}


@kernel("log_softmax", FLOATS)
def log_softmax(inputs, attrs):
    x = inputs["X"]
    axis = attrs["axis"]
    shifted = x - x.max(axis=axis, keepdims=True)
    return {"Out": shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))}


@kernel("log_softmax_grad", FLOATS)
def log_softmax_grad(inputs, attrs):
    out, d = inputs["Out"], inputs["Out@GRAD"]
    return {"X@GRAD": d - np.exp(out) * d.sum(axis=attrs["axis"], keepdims=True)}
