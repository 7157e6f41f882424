"""Arithmetic layers: mul, matmul, mean, scale."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable
from oar.layers.elementwise import check_same_dtype

__all__ = ["mul", "matmul", "mean", "scale"]


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

        raise DtypeError.in_layer(
            "mean",
            f"x '{x.name}' must be float16, float32 or float64 (as in Fluid), given {x.dtype}",
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
