"""Activation layers: relu, sigmoid, tanh, softmax, ... each a thin op wrapper."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = [
    "relu",
    "sigmoid",
    "tanh",
    "exp",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "square",
    "abs",
    "log",
    "sin",
    "cos",
    "softsign",
    "softplus",
    "sign",
    "softmax",
]


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


def abs(x, name=None):  # Fluid's name
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
    """-1, 0 or 1 by the sign of each element; float input only, as in Fluid."""
    from oar.layer_helper import is_variable

    if is_variable(x) and str(x.dtype) not in ("float16", "float32", "float64"):
        raise ArgumentTypeError(
            "sign",
            f"x '{x.name}' must be float16, float32 or float64 (as in Fluid), given {x.dtype}",
        )
    return _unary("sign", x, name)


def softmax(input: Any, use_cudnn: bool = False, name: str | None = None, axis: int = -1) -> Any:
    """Softmax along ``axis``."""
    return _unary("softmax", input, name, {"axis": axis, "use_cudnn": use_cudnn})


# --- parametric activations (Fluid 1.8 signatures) ------------------------------------------
def _with_attrs(op_type: str, x: Any, name: str | None, **attrs: Any) -> Any:
    return _unary(op_type, x, name, {k: v for k, v in attrs.items() if v is not None})


def leaky_relu(x, alpha=0.02, name=None):
    """x if x > 0 else alpha * x."""
    return _with_attrs("leaky_relu", x, name, alpha=float(alpha))


def elu(x, alpha=1.0, name=None):
    return _with_attrs("elu", x, name, alpha=float(alpha))


def relu6(x, threshold=6.0, name=None):
    return _with_attrs("relu6", x, name, threshold=float(threshold))


def brelu(x, t_min=0.0, t_max=24.0, name=None):
    if t_min >= t_max:
        raise ArgumentError("brelu", f"t_min ({t_min}) must be less than t_max ({t_max})")
    return _with_attrs("brelu", x, name, t_min=float(t_min), t_max=float(t_max))


def soft_relu(x, threshold=40.0, name=None):
    return _with_attrs("soft_relu", x, name, threshold=float(threshold))


def swish(x, beta=1.0, name=None):
    return _with_attrs("swish", x, name, beta=float(beta))


def gelu(x, approximate=False):
    return _with_attrs("gelu", x, None, approximate=bool(approximate))


def hard_sigmoid(x, slope=0.2, offset=0.5, name=None):
    return _with_attrs("hard_sigmoid", x, name, slope=float(slope), offset=float(offset))


def hard_swish(x, threshold=6.0, scale=6.0, offset=3.0, name=None):
    if scale == 0:
        raise ArgumentError("hard_swish", "scale must not be 0")
    return _with_attrs(
        "hard_swish", x, name, threshold=float(threshold), scale=float(scale), offset=float(offset)
    )


def selu(x, scale=None, alpha=None, name=None):
    return _with_attrs(
        "selu",
        x,
        name,
        scale=None if scale is None else float(scale),
        alpha=None if alpha is None else float(alpha),
    )


def stanh(x, scale_a=0.67, scale_b=1.7159, name=None):
    return _with_attrs("stanh", x, name, scale_a=float(scale_a), scale_b=float(scale_b))


def thresholded_relu(x, threshold=None):
    return _with_attrs(
        "thresholded_relu", x, None, threshold=None if threshold is None else float(threshold)
    )


def softshrink(x, alpha=None):
    if alpha is not None and alpha < 0:
        raise ArgumentError("softshrink", f"alpha must be >= 0, given {alpha}")
    return _unary("softshrink", x, None, {} if alpha is None else {"lambda": float(alpha)})


def hard_shrink(x, threshold=None):
    return _with_attrs(
        "hard_shrink", x, None, threshold=None if threshold is None else float(threshold)
    )


def logsigmoid(x, name=None):
    return _unary("logsigmoid", x, name)


def tanh_shrink(x, name=None):
    return _unary("tanh_shrink", x, name)


def floor(x, name=None):
    return _unary("floor", x, name)


def ceil(x, name=None):
    return _unary("ceil", x, name)


def round(x, name=None):  # Fluid's name
    return _unary("round", x, name)


def pow(x, factor=1.0, name=None):  # Fluid's name
    """x ** factor; ``factor`` may be a float or a [1] Variable."""
    from oar.layer_helper import is_variable

    if is_variable(factor):
        helper = LayerHelper("pow", name=name)
        check_variable("pow", "x", x)
        out = helper.create_variable_for_type_inference(x.dtype)
        helper.append_op("pow", {"X": [x], "FactorTensor": [factor]}, {"Out": [out]})
        return out
    try:
        factor = float(factor)
    except (TypeError, ValueError):
        raise ArgumentTypeError(
            "pow", f"factor must be a float or a [1] Variable, given {factor!r}"
        ) from None
    return _with_attrs("pow", x, name, factor=factor)


def log_softmax(input, axis=None, dtype=None, name=None):
    """log(softmax(input)) along ``axis`` (default -1), computed stably."""
    x = input if dtype is None else _cast(input, dtype)
    return _unary("log_softmax", x, name, {"axis": -1 if axis is None else int(axis)})


def _cast(x, dtype):
    from oar.layers.tensor import cast

    return cast(x, dtype)


def prelu(x, mode, param_attr=None, name=None):
    """x if x > 0 else alpha * x with a learnable alpha: one ('all'), per channel, or per element."""
    from oar.initializer import Constant
    from oar.ops.prelu import alpha_shape

    if mode not in ("all", "channel", "element"):
        raise ArgumentError("prelu", f"mode must be 'all', 'channel' or 'element', given {mode!r}")
    helper = LayerHelper("prelu", name=name)
    check_variable("prelu", "x", x)
    if mode != "all" and len(x.shape) < 2:
        raise ArgumentError(
            "prelu", f"mode '{mode}' needs x of rank >= 2, given shape {list(x.shape)}"
        )
    shape = alpha_shape(list(x.shape), mode)
    if any(d < 0 for d in shape):
        raise ArgumentError(
            "prelu", f"mode '{mode}' needs x's non-batch dims known, given shape {list(x.shape)}"
        )
    alpha = helper.create_parameter(param_attr, shape, x.dtype, default_initializer=Constant(0.25))
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("prelu", {"X": [x], "Alpha": [alpha]}, {"Out": [out]}, {"mode": mode})
    return out


def maxout(x, groups, name=None, axis=1):
    """Max over ``groups`` consecutive channels."""
    if axis not in (1, -1, 3):
        raise ArgumentError("maxout", f"axis must be 1, -1 or 3, given {axis}")
    return _with_attrs("maxout", x, name, groups=int(groups), axis=int(axis))


__all__ += [
    "leaky_relu",
    "elu",
    "relu6",
    "brelu",
    "soft_relu",
    "swish",
    "gelu",
    "hard_sigmoid",
    "hard_swish",
    "selu",
    "stanh",
    "thresholded_relu",
    "softshrink",
    "hard_shrink",
    "logsigmoid",
    "tanh_shrink",
    "floor",
    "ceil",
    "round",
    "pow",
    "log_softmax",
    "prelu",
    "maxout",
]


# --- Fluid 1.8's paddle.tensor-style unary ops ----------------------------------------------
def erf(x):
    """The Gauss error function, elementwise."""
    return _unary("erf", x)


def acos(x, name=None):
    return _unary("acos", x, name)


def asin(x, name=None):
    return _unary("asin", x, name)


def atan(x, name=None):
    return _unary("atan", x, name)


def log1p(x, out=None, name=None):
    """log(1 + x); ``out`` (a Variable) receives the result when given."""
    if out is None:
        return _unary("log1p", x, name)
    helper = LayerHelper("log1p", name=name)
    check_variable("log1p", "x", x)
    helper.append_op("log1p", {"X": [x]}, {"Out": [out]}, {})
    return out


def mish(x, threshold=20, name=None):
    """x * tanh(softplus(x)), softplus thresholded at ``threshold`` as in Fluid."""
    if not isinstance(threshold, (int, float)) or threshold <= 0:
        raise ArgumentError("mish", f"threshold must be a positive number, given {threshold!r}")
    return _with_attrs("mish", x, name, threshold=float(threshold))


__all__ += ["erf", "acos", "asin", "atan", "log1p", "mish"]
