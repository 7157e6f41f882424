"""The fully connected layer."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, DtypeError, ShapeError
from oar.layer_helper import LayerHelper

__all__ = ["fc"]

_FLOATS = ("float16", "float32", "float64")


def fc(
    input: Any,
    size: int,
    num_flatten_dims: int = 1,
    param_attr: Any = None,
    bias_attr: Any = None,
    act: Any = None,
    name: str | None = None,
) -> Any:
    """``act(sum_i flatten(input_i) @ W_i + b)``.

    Each input is flattened to 2-D: its first ``num_flatten_dims`` dims form the
    rows, the rest the columns that ``W_i`` maps to ``size`` outputs.
    """
    helper = LayerHelper(
        "fc", input=input, param_attr=param_attr, bias_attr=bias_attr, act=act, name=name
    )
    if not isinstance(size, int) or size <= 0:
        raise ArgumentError("fc", f"size must be a positive int, given {size!r}")
    inputs = helper.multiple_input()
    dtype = helper.input_dtype()
    if act is not None:
        from oar.layer_helper import check_activation

        check_activation("fc", act["type"] if isinstance(act, dict) else act)
    mul_results = []
    for x, attr in zip(inputs, helper.param_attr_list(len(inputs))):
        if str(x.dtype) not in _FLOATS:
            raise DtypeError.in_layer(
                "fc",
                f"input '{x.name}' must be float16, float32 or float64 (as in Fluid), "
                f"given {x.dtype}",
            )
        shape = list(x.shape)
        if not 1 <= num_flatten_dims < len(shape):
            raise ShapeError.in_layer(
                "fc",
                f"num_flatten_dims={num_flatten_dims} must be in [1, {len(shape) - 1}] for input "
                f"'{x.name}' of shape {shape}",
            )
        cols = 1
        for d in shape[num_flatten_dims:]:
            if d < 0:
                raise ShapeError.in_layer(
                    "fc",
                    f"input '{x.name}' of shape {shape} has an unknown dim after num_flatten_dims="
                    f"{num_flatten_dims}; fc needs those dims to size its weight",
                )
            cols *= d
        w = helper.create_parameter(attr, [cols, size], dtype)
        tmp = helper.create_variable_for_type_inference(dtype)
        helper.append_op(
            "mul",
            {"X": [x], "Y": [w]},
            {"Out": [tmp]},
            {"x_num_col_dims": num_flatten_dims, "y_num_col_dims": 1},
        )
        mul_results.append(tmp)
    if len(mul_results) == 1:
        pre_bias = mul_results[0]
    else:
        pre_bias = helper.create_variable_for_type_inference(dtype)
        helper.append_op("sum", {"X": mul_results}, {"Out": [pre_bias]})
    pre_act = helper.append_bias_op(pre_bias, dim_start=num_flatten_dims)
    return helper.append_activation(pre_act)
