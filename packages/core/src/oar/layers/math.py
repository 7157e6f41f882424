"""Arithmetic layers: elementwise_*, mul, matmul, mean, scale."""

from __future__ import annotations

from typing import Any

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
    "mul",
    "matmul",
    "mean",
    "scale",
]


def check_same_dtype(layer: str, args: dict) -> None:
    """Dygraph only: raise DtypeError if the named Variables differ in dtype.

    Static programs get this from the ops' shape inference; eager kernels would let
    numpy upcast silently, which Fluid 1.8 rejects ("Tensor holds the wrong type").
    """
    from oar.framework.mode import _dygraph_tracer

    if _dygraph_tracer() is None or len(args) < 2:
        return
    dtypes = {k: str(v.dtype) for k, v in args.items()}
    if len(set(dtypes.values())) > 1:
        from oar.errors import DtypeError

        given = ", ".join(f"{k} {d}" for k, d in dtypes.items())
        raise DtypeError(
            f"{layer}: inputs must have the same dtype (nothing is cast), given {given}"
        )


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


def mul(
    x: Any, y: Any, x_num_col_dims: int = 1, y_num_col_dims: int = 1, name: str | None = None
) -> Any:
    """Flatten ``x`` at ``x_num_col_dims`` and ``y`` at ``y_num_col_dims`` to 2-D, then multiply."""
    helper = LayerHelper("mul", name=name)
    check_variable("mul", "x", x)
    check_variable("mul", "y", y)
    check_same_dtype("mul", {"x": x, "y": y})
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "mul",
        {"X": [x], "Y": [y]},
        {"Out": [out]},
        {"x_num_col_dims": x_num_col_dims, "y_num_col_dims": y_num_col_dims},
    )
    return out


def matmul(
    x: Any,
    y: Any,
    transpose_x: bool = False,
    transpose_y: bool = False,
    alpha: float = 1.0,
    name: str | None = None,
) -> Any:
    """Batched matrix product ``alpha * op(x) @ op(y)``."""
    helper = LayerHelper("matmul", name=name)
    check_variable("matmul", "x", x)
    check_variable("matmul", "y", y)
    check_same_dtype("matmul", {"x": x, "y": y})
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "matmul",
        {"X": [x], "Y": [y]},
        {"Out": [out]},
        {"transpose_X": transpose_x, "transpose_Y": transpose_y, "alpha": float(alpha)},
    )
    return out


def mean(x: Any, name: str | None = None) -> Any:
    """The mean of all elements, as a [1] tensor."""
    helper = LayerHelper("mean", name=name)
    check_variable("mean", "x", x)
    if str(x.dtype) not in ("float16", "float32", "float64"):
        from oar.errors import DtypeError

        raise DtypeError(
            f"mean: x '{x.name}' must be float16, float32 or float64 (as in Fluid), given {x.dtype}"
        )
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("mean", {"X": [x]}, {"Out": [out]})
    return out


def scale(
    x: Any,
    scale: float = 1.0,
    bias: float = 0.0,
    bias_after_scale: bool = True,
    act: Any = None,
    name: str | None = None,
) -> Any:
    """``x * scale + bias`` (or ``(x + bias) * scale``); ``scale`` may be a [1] Variable."""
    helper = LayerHelper("scale", act=act, name=name)
    check_variable("scale", "x", x)
    out = helper.create_variable_for_type_inference(x.dtype)
    inputs = {"X": [x]}
    attrs = {"bias": float(bias), "bias_after_scale": bias_after_scale}
    if hasattr(scale, "name") and not isinstance(scale, (int, float)):
        inputs["ScaleTensor"] = [scale]
    else:
        attrs["scale"] = float(scale)
    helper.append_op("scale", inputs, {"Out": [out]}, attrs)
    return helper.append_activation(out)
