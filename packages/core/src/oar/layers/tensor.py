"""Tensor-creating and converting layers: fill_constant, ones, zeros, cast, assign, sums."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from oar.errors import ArgumentError, ArgumentTypeError
from oar.framework.dtypes import convert_dtype
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = [
    "fill_constant",
    "fill_constant_batch_size_like",
    "ones",
    "zeros",
    "cast",
    "assign",
    "sums",
    "create_tensor",
    "create_global_var",
    "create_parameter",
    "zeros_like",
    "ones_like",
]


def _check_shape(layer: str, shape: Any) -> list:
    if isinstance(shape, int):
        shape = [shape]
    if not isinstance(shape, (list, tuple)):
        raise ArgumentTypeError(
            layer, f"shape must be a list/tuple of ints, given {type(shape).__name__}"
        )
    for d in shape:
        if not isinstance(d, (int, np.integer)) or d < -1:
            raise ArgumentError(layer, f"shape entries must be ints >= -1, given {list(shape)}")
    return [int(d) for d in shape]


def fill_constant(
    shape: Sequence, dtype: Any, value: float, force_cpu: bool = False, out: Any = None
) -> Any:
    """A tensor of ``shape`` filled with ``value``."""
    helper = LayerHelper("fill_constant")
    shape = _check_shape("fill_constant", shape)
    dtype = convert_dtype(dtype)
    if out is None:
        out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "fill_constant",
        {},
        {"Out": [out]},
        {"shape": shape, "dtype": dtype, "value": float(value), "force_cpu": force_cpu},
    )
    out.stop_gradient = True
    return out


def fill_constant_batch_size_like(
    input: Any,
    shape: Sequence,
    dtype: Any,
    value: float,
    input_dim_idx: int = 0,
    output_dim_idx: int = 0,
    force_cpu: bool = False,
) -> Any:
    """Like fill_constant, with dim ``output_dim_idx`` taken from ``input``'s ``input_dim_idx``."""
    helper = LayerHelper("fill_constant_batch_size_like")
    check_variable("fill_constant_batch_size_like", "input", input)
    dtype = convert_dtype(dtype)
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "fill_constant_batch_size_like",
        {"Input": [input]},
        {"Out": [out]},
        {
            "shape": _check_shape("fill_constant_batch_size_like", shape),
            "dtype": dtype,
            "value": float(value),
            "input_dim_idx": input_dim_idx,
            "output_dim_idx": output_dim_idx,
            "force_cpu": force_cpu,
        },
    )
    out.stop_gradient = True
    return out


def ones(shape: Sequence, dtype: Any, force_cpu: bool = False) -> Any:
    return fill_constant(shape, dtype, 1.0, force_cpu)


def zeros(shape: Sequence, dtype: Any, force_cpu: bool = False) -> Any:
    return fill_constant(shape, dtype, 0.0, force_cpu)


def zeros_like(x: Any, out: Any = None) -> Any:
    helper = LayerHelper("zeros_like")
    check_variable("zeros_like", "x", x)
    out = out or helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("fill_zeros_like", {"X": [x]}, {"Out": [out]})
    out.stop_gradient = True
    return out


def ones_like(x: Any, out: Any = None) -> Any:
    helper = LayerHelper("ones_like")
    check_variable("ones_like", "x", x)
    out = out or helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("fill_any_like", {"X": [x]}, {"Out": [out]}, {"value": 1.0})
    out.stop_gradient = True
    return out


def cast(x: Any, dtype: Any) -> Any:
    """``x`` converted to ``dtype``."""
    helper = LayerHelper("cast")
    check_variable("cast", "x", x)
    dtype = convert_dtype(dtype)
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op("cast", {"X": [x]}, {"Out": [out]}, {"in_dtype": x.dtype, "out_dtype": dtype})
    return out


def assign(input: Any, output: Any = None) -> Any:
    """Copy a Variable, or a numpy array / list, into ``output``."""
    helper = LayerHelper("assign")
    if is_variable(input):
        output = output or helper.create_variable_for_type_inference(input.dtype)
        helper.append_op("assign", {"X": [input]}, {"Out": [output]})
        return output
    try:
        arr = np.asarray(input)
    except ValueError:
        raise ArgumentTypeError(
            "assign",
            f"input must be a Variable, a numpy array or a rectangular (nested) list of "
            f"numbers, given a ragged {type(input).__name__}",
        ) from None
    if arr.dtype == object:
        raise ArgumentTypeError(
            "assign",
            f"input must be a Variable, a numpy array or a list of numbers, "
            f"given {type(input).__name__} holding {type(arr.flat[0]).__name__}",
        ) from None
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    dtype = convert_dtype(arr.dtype)
    key = {
        "float32": "fp32_values",
        "int32": "int32_values",
        "int64": "int64_values",
        "bool": "bool_values",
    }.get(dtype)
    if key is None:
        raise ArgumentTypeError(
            "assign",
            f"numpy input of dtype {dtype} is not supported (use float32, int32, int64 or bool)",
        )
    output = output or helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "assign_value",
        {},
        {"Out": [output]},
        {"shape": list(arr.shape), "dtype": dtype, key: arr.reshape(-1).tolist()},
    )
    return output


def sums(input: Sequence, out: Any = None) -> Any:
    """Elementwise sum of a list of Variables of one shape."""
    helper = LayerHelper("sums")
    check_variable("sums", "input", list(input), allow_list=True)
    from oar.layers.elementwise import check_same_dtype

    check_same_dtype("sums", {f"input[{i}]": x for i, x in enumerate(input)})
    out = out or helper.create_variable_for_type_inference(input[0].dtype)
    helper.append_op("sum", {"X": list(input)}, {"Out": [out]})
    return out


def create_tensor(dtype: Any, name: str | None = None, persistable: bool = False) -> Any:
    helper = LayerHelper("create_tensor", name=name)
    return helper.create_variable(
        name=helper.name, dtype=convert_dtype(dtype), persistable=persistable
    )


def create_global_var(
    shape: Sequence,
    value: float,
    dtype: Any,
    persistable: bool = False,
    force_cpu: bool = False,
    name: str | None = None,
) -> Any:
    """A global variable initialised to ``value`` by the startup program."""
    from oar.framework import unique_name
    from oar.initializer import Constant

    helper = LayerHelper("global_var", name=name)
    var = helper.create_global_variable(
        name=name or unique_name.generate("global_var"),
        shape=_check_shape("create_global_var", shape),
        dtype=convert_dtype(dtype),
        persistable=persistable,
        stop_gradient=True,
    )
    helper.set_variable_initializer(var, Constant(float(value), force_cpu))
    return var


def create_parameter(
    shape: Sequence,
    dtype: Any,
    name: str | None = None,
    attr: Any = None,
    is_bias: bool = False,
    default_initializer: Any = None,
) -> Any:
    from oar.framework.param_attr import ParamAttr

    helper = LayerHelper("create_parameter")
    if attr is None:
        attr = ParamAttr(name=name)
    return helper.create_parameter(
        attr,
        _check_shape("create_parameter", shape),
        convert_dtype(dtype),
        is_bias,
        default_initializer,
    )
