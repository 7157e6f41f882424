"""numpy kernels for unary activations and their gradients.

Large float tensors are cut into pieces that the kernel thread pool runs at once (``_split``):
every activation is elementwise, so the results are bit for bit the same.
"""

from __future__ import annotations

import math

from oar_kernels_cpu.kernels import FLOATS, _parallel, _split, array_module, kernel

xp = array_module(__name__)


def _unary(op_type, fn, dtypes=FLOATS):
    if isinstance(fn, xp.ufunc) or fn is _sigmoid:
        # same-dtype elementwise maps (fn(x, out=...)): a dying float input can hold the result
        def unary(inputs, attrs, donated=frozenset()):
            x = inputs["X"]
            if x.size < _parallel.SPLIT_MIN:  # the common case: one call, no out= to parse
                if donated and x.dtype.kind == "f":  # only X can be donated
                    return {"Out": fn(x, out=x)}
                return {"Out": fn(x)}
            out = x if "X" in donated and x.dtype.kind == "f" else None
            return {"Out": _split.ufunc(xp, fn, x, out=out)}

        kernel(op_type, dtypes, inplace=True)(unary)
    else:

        def mapped(inputs, attrs):
            x = inputs["X"]
            if x.size < _parallel.SPLIT_MIN:
                return {"Out": fn(x)}
            return {"Out": _split.apply(xp, fn, x)}

        kernel(op_type, dtypes)(mapped)


def _sigmoid(x, out=None):
    t = xp.negative(x, out=out)
    xp.logaddexp(0, t, out=t)
    xp.negative(t, out=t)
    return xp.exp(t, out=t).astype(x.dtype, copy=False)


def _softplus(x):
    return xp.logaddexp(0, x).astype(x.dtype, copy=False)


@kernel("relu", FLOATS, inplace=True)
def relu(inputs, attrs, donated=frozenset()):
    x = inputs["X"]
    if x.size < _parallel.SPLIT_MIN:
        return {"Out": xp.maximum(x, 0, out=x) if donated else xp.maximum(x, 0)}
    return {"Out": _split.ufunc(xp, xp.maximum, x, 0, out=x if "X" in donated else None)}


_unary("sigmoid", _sigmoid)
_unary("tanh", xp.tanh)
_unary("exp", xp.exp)
_unary("sqrt", xp.sqrt)
_unary("rsqrt", lambda x: 1 / xp.sqrt(x))
_unary("reciprocal", lambda x: 1 / x)
_unary("square", xp.square, None)
_unary("abs", xp.abs, None)
_unary("log", xp.log)
_unary("sin", xp.sin)
_unary("cos", xp.cos)
_unary("softsign", lambda x: x / (1 + xp.abs(x)))
_unary("softplus", _softplus)
_unary("sign", xp.sign, None)


def _grad_of(slot, fn):
    """A grad kernel ``X@GRAD = fn(inputs[slot], Out@GRAD)`` (the two of the same shape)."""

    def grad(inputs, attrs):
        a = inputs[slot]
        if a.size < _parallel.SPLIT_MIN:  # the common case: one call, no helpers
            return {"X@GRAD": fn(a, inputs["Out@GRAD"])}
        return {"X@GRAD": _split.apply(xp, fn, a, inputs["Out@GRAD"])}

    return grad


def _grad_out(op_type, fn):
    kernel(op_type + "_grad", FLOATS)(_grad_of("Out", fn))


def _grad_x(op_type, fn, dtypes=FLOATS):
    kernel(op_type + "_grad", dtypes)(_grad_of("X", fn))


@kernel("relu_grad", FLOATS, inplace=True)
def relu_grad(inputs, attrs, donated=frozenset()):
    y, d = inputs["Out"], inputs["Out@GRAD"]
    out = d if "Out@GRAD" in donated else None
    if d.size < _parallel.SPLIT_MIN or (out is not None and _parallel.parallel_threads() < 2):
        # one pass straight into the donated dy (no full-size temporary to copy from)
        return {"X@GRAD": xp.multiply(d, y > 0, out=out)}
    return {"X@GRAD": _split.apply(xp, _relu_grad, d, y, out=out)}


def _relu_grad(d, y):
    return d * (y > 0)


_grad_out("sigmoid", lambda y, d: d * y * (1 - y))
_grad_out("tanh", lambda y, d: d * (1 - y * y))
_grad_out("exp", lambda y, d: d * y)
_grad_out("sqrt", lambda y, d: d * 0.5 / y)
_grad_out("rsqrt", lambda y, d: d * -0.5 * y * y * y)
_grad_out("reciprocal", lambda y, d: d * -(y * y))
_grad_x("square", lambda x, d: (d + d) * x, None)  # d + d is d * 2 exactly, with no scalar
_grad_x("abs", lambda x, d: d * xp.sign(x), None)
_grad_x("log", lambda x, d: d / x)
_grad_x("sin", lambda x, d: d * xp.cos(x))
_grad_x("cos", lambda x, d: -d * xp.sin(x))
_grad_x("softsign", lambda x, d: d / xp.square(1 + xp.abs(x)))
_grad_x("softplus", lambda x, d: d * _sigmoid(x))


# --- logsigmoid, tanh_shrink, piecewise-constant --------------------------------------------
_unary("logsigmoid", lambda x: -xp.logaddexp(0, -x).astype(x.dtype, copy=False))
_unary("tanh_shrink", lambda x: x - xp.tanh(x))
_grad_x("logsigmoid", lambda x, d: d * _sigmoid(-x))
_grad_x("tanh_shrink", lambda x, d: d * xp.square(xp.tanh(x)))
_unary("acos", xp.arccos)
_unary("asin", xp.arcsin)
_unary("atan", xp.arctan)
_unary("log1p", xp.log1p)
_grad_x("acos", lambda x, d: -d / xp.sqrt(1 - x * x))
_grad_x("asin", lambda x, d: d / xp.sqrt(1 - x * x))
_grad_x("atan", lambda x, d: d / (1 + x * x))
_grad_x("log1p", lambda x, d: d / (1 + x))
for _name, _fn in (("floor", xp.floor), ("ceil", xp.ceil), ("round", xp.round)):
    _unary(_name, _fn)
    _grad_x(_name, lambda x, d: xp.zeros_like(d))


# --- parametric activations: forward f(x, attrs), grad g(x, out, d, attrs) ------------------
_SQRT_2_PI = math.sqrt(2.0 / math.pi)


def erf(x: xp.ndarray) -> xp.ndarray:
    """erf via Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7: float32 precision), vectorised."""
    sign = xp.sign(x)
    a = xp.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return (sign * (1.0 - poly * xp.exp(-a * a))).astype(x.dtype, copy=False)


kernel("erf", FLOATS)(lambda inputs, attrs: {"Out": erf(inputs["X"])})
kernel("erf_grad", FLOATS)(
    lambda inputs, attrs: {
        "X@GRAD": (
            inputs["Out@GRAD"] * (2 / math.sqrt(math.pi)) * xp.exp(-xp.square(inputs["X"]))
        ).astype(inputs["X"].dtype, copy=False)
    }
)


def _mish_softplus(x, t):
    # Fluid's thresholded softplus: x above t, exp(x) below -t, log1p(exp(x)) between
    return xp.where(x > t, x, xp.where(x < -t, xp.exp(x), xp.log1p(xp.exp(xp.clip(x, -t, t)))))


def _mish(x, a):
    return x * xp.tanh(_mish_softplus(x, a["threshold"]))


def _mish_grad(x, out, d, a):
    t = a["threshold"]
    sp = _mish_softplus(x, t)
    tsp = xp.tanh(sp)
    dsp = xp.where(x > t, 1.0, xp.where(x < -t, xp.exp(x), _sigmoid(xp.clip(x, -t, t))))
    return d * (tsp + x * (1 - tsp * tsp) * dsp)


def _gelu(x, a):
    if a["approximate"]:
        return 0.5 * x * (1 + xp.tanh(_SQRT_2_PI * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def _gelu_grad(x, out, d, a):
    if a["approximate"]:
        inner = _SQRT_2_PI * (x + 0.044715 * x**3)
        t = xp.tanh(inner)
        return d * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _SQRT_2_PI * (1 + 3 * 0.044715 * x * x))
    return d * (
        0.5 * (1 + erf(x / math.sqrt(2))) + x * xp.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    )


def _hard_swish(x, a):
    return x * xp.clip(x + a["offset"], 0, a["threshold"]) / a["scale"]


def _hard_swish_grad(x, out, d, a):
    z = x + a["offset"]
    g = xp.where(
        z <= 0,
        0.0,
        xp.where(
            z >= a["threshold"], a["threshold"] / a["scale"], (2 * x + a["offset"]) / a["scale"]
        ),
    )
    return d * g.astype(x.dtype, copy=False)


def _soft_relu(x, a):
    t = a["threshold"]
    return xp.logaddexp(0, xp.clip(x, -t, t)).astype(x.dtype, copy=False)


_PARAMETRIC = {
    "leaky_relu": (
        lambda x, a: xp.where(x > 0, x, x * a["alpha"]),
        lambda x, o, d, a: d * xp.where(x > 0, 1.0, a["alpha"]).astype(x.dtype),
    ),
    "elu": (
        lambda x, a: xp.where(x > 0, x, a["alpha"] * xp.expm1(xp.minimum(x, 0))),
        lambda x, o, d, a: (
            d * xp.where(x > 0, 1.0, a["alpha"] * xp.exp(xp.minimum(x, 0))).astype(x.dtype)
        ),
    ),
    "relu6": (
        lambda x, a: xp.clip(x, 0, a["threshold"]),
        lambda x, o, d, a: d * ((x > 0) & (x < a["threshold"])),
    ),
    "brelu": (
        lambda x, a: xp.clip(x, a["t_min"], a["t_max"]),
        lambda x, o, d, a: d * ((x > a["t_min"]) & (x < a["t_max"])),
    ),
    "soft_relu": (
        _soft_relu,
        lambda x, o, d, a: (
            d * _sigmoid(xp.clip(x, -a["threshold"], a["threshold"])) * (xp.abs(x) < a["threshold"])
        ),
    ),
    "swish": (
        lambda x, a: x * _sigmoid(a["beta"] * x),
        lambda x, o, d, a: d * (lambda s: s + a["beta"] * x * s * (1 - s))(_sigmoid(a["beta"] * x)),
    ),
    "gelu": (_gelu, _gelu_grad),
    "hard_sigmoid": (
        lambda x, a: xp.clip(a["slope"] * x + a["offset"], 0, 1),
        lambda x, o, d, a: (
            d
            * a["slope"]
            * ((a["slope"] * x + a["offset"] > 0) & (a["slope"] * x + a["offset"] < 1))
        ),
    ),
    "hard_swish": (_hard_swish, _hard_swish_grad),
    "mish": (_mish, _mish_grad),
    "selu": (
        lambda x, a: a["scale"] * xp.where(x > 0, x, a["alpha"] * xp.expm1(xp.minimum(x, 0))),
        lambda x, o, d, a: (
            d
            * a["scale"]
            * xp.where(x > 0, 1.0, a["alpha"] * xp.exp(xp.minimum(x, 0))).astype(x.dtype)
        ),
    ),
    "stanh": (
        lambda x, a: a["scale_b"] * xp.tanh(a["scale_a"] * x),
        lambda x, o, d, a: (
            d * a["scale_a"] * a["scale_b"] * (1 - xp.square(xp.tanh(a["scale_a"] * x)))
        ),
    ),
    "thresholded_relu": (
        lambda x, a: xp.where(x > a["threshold"], x, 0).astype(x.dtype, copy=False),
        lambda x, o, d, a: d * (x > a["threshold"]),
    ),
    "softshrink": (
        lambda x, a: xp.where(
            x > a["lambda"], x - a["lambda"], xp.where(x < -a["lambda"], x + a["lambda"], 0)
        ).astype(x.dtype, copy=False),
        lambda x, o, d, a: d * (xp.abs(x) > a["lambda"]),
    ),
    "hard_shrink": (
        lambda x, a: xp.where(xp.abs(x) > a["threshold"], x, 0).astype(x.dtype, copy=False),
        lambda x, o, d, a: d * (xp.abs(x) > a["threshold"]),
    ),
}


def _register_parametric(name, fwd, bwd):
    def forward(inputs, attrs):
        x = inputs["X"]
        return {"Out": _split.apply(xp, lambda x: fwd(x, attrs), x).astype(x.dtype, copy=False)}

    def grad(inputs, attrs):
        x, out, d = inputs["X"], inputs.get("Out"), inputs["Out@GRAD"]
        dx = _split.apply(xp, lambda x, o, d: bwd(x, o, d, attrs), x, out, d)
        return {"X@GRAD": dx.astype(x.dtype, copy=False)}

    kernel(name, FLOATS)(forward)
    kernel(name + "_grad", FLOATS)(grad)


for _name, (_fwd, _bwd) in _PARAMETRIC.items():
    _register_parametric(_name, _fwd, _bwd)


def _factor(inputs, attrs):
    ft = inputs.get("FactorTensor")
    return float(xp.asarray(ft).reshape(-1)[0]) if ft is not None else attrs["factor"]


@kernel("pow", FLOATS)
def pow_(inputs, attrs):
    x = inputs["X"]
    return {"Out": xp.power(x, xp.asarray(_factor(inputs, attrs), x.dtype))}


@kernel("pow_grad", FLOATS)
def pow_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    f = xp.asarray(_factor(inputs, attrs), x.dtype)
    return {"X@GRAD": d * f * xp.power(x, f - 1)}


@kernel("log_softmax", FLOATS)
def log_softmax(inputs, attrs):
    x = inputs["X"]
    axis = attrs["axis"]
    shifted = x - x.max(axis=axis, keepdims=True)
    return {"Out": shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))}


@kernel("log_softmax_grad", FLOATS)
def log_softmax_grad(inputs, attrs):
    out, d = inputs["Out"], inputs["Out@GRAD"]
    return {"X@GRAD": d - xp.exp(out) * d.sum(axis=attrs["axis"], keepdims=True)}
