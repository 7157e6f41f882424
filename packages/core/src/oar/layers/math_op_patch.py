"""Python operators on static Variables (``a + b``, ``x * 2``), as Fluid's math_op_patch."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, is_variable


def scale(x: Any, factor: float, bias: float = 0.0) -> Any:
    from oar.layers.math import scale as scale_layer

    return scale_layer(x, factor, bias)


def _const_like(x: Any, value: float) -> Any:
    from oar.layers.tensor import fill_constant

    return fill_constant([1], x.dtype, value)


def binary(x: Any, other: Any, op_type: str, reverse: bool = False) -> Any:
    if not is_variable(other):
        if not isinstance(other, (int, float)):
            return NotImplemented
        # cheap forms with scale, as Fluid does
        if op_type == "elementwise_add":
            return scale(x, 1.0, float(other))
        if op_type == "elementwise_sub":
            return scale(x, -1.0, float(other)) if reverse else scale(x, 1.0, -float(other))
        if op_type == "elementwise_mul":
            return scale(x, float(other))
        if op_type == "elementwise_div" and not reverse:
            return scale(x, 1.0 / float(other))
        other = _const_like(x, float(other))
    a, b = (other, x) if reverse else (x, other)
    helper = LayerHelper(op_type)
    if op_type == "matmul":
        from oar.layers.math import matmul

        return matmul(a, b)
    out_dtype = (
        "bool"
        if op_type in ("less_than", "less_equal", "greater_than", "greater_equal")
        else a.dtype
    )
    out = helper.create_variable_for_type_inference(out_dtype)
    attrs = {"axis": -1} if op_type.startswith("elementwise") else {}
    helper.append_op(op_type, {"X": [a], "Y": [b]}, {"Out": [out]}, attrs)
    return out
