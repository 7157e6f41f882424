"""Tensor arrays: ``create_array``, ``array_write``, ``array_read``, ``array_length``,
``tensor_array_to_tensor``.

Static graph: an array is a variable of type ``lod_tensor_array`` whose shape
and dtype describe one item; at run time it holds a list. In dygraph (as in
Fluid 1.8) an array is a plain Python list of eager variables.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oar.errors import ArgumentError, ArgumentTypeError
from oar.framework.dtypes import VarType, convert_dtype
from oar.framework.mode import current_builder
from oar.layer_helper import LayerHelper, check_variable

__all__ = [
    "create_array",
    "array_write",
    "array_read",
    "array_length",
    "tensor_array_to_tensor",
]


def _eager() -> bool:
    """Dygraph: control flow runs as Python control flow (Fluid 1.8's eager behaviour)."""
    return current_builder().eager


def _is_array(x: Any) -> bool:
    return getattr(x, "type", None) == VarType.LOD_TENSOR_ARRAY


def _check_array(layer: str, arg: str, x: Any) -> None:
    if _eager():
        if not isinstance(x, list):
            raise ArgumentTypeError(
                layer, f"'{arg}' must be a list in dygraph mode, given {type(x).__name__}"
            )
        return
    if not _is_array(x):
        raise ArgumentTypeError(
            layer,
            f"'{arg}' must be a tensor array (fluid.layers.create_array), given "
            f"{type(x).__name__} {getattr(x, 'name', '')} of type {getattr(x, 'type', None)}",
            variable=getattr(x, "name", None),
        )


def _check_index(layer: str, i: Any) -> None:
    check_variable(layer, "i", i)
    shape = list(i.shape or [1])
    if (
        convert_dtype(i.dtype) not in ("int32", "int64")
        or len(shape) != 1
        or shape[0] not in (1, -1)
    ):
        raise ArgumentTypeError(
            layer,
            f"the index 'i' must be an int64 Variable of shape [1], given {i.dtype} {shape}",
            variable=getattr(i, "name", None),
        )


def _eager_index(i: Any) -> int:
    return int(i.numpy().reshape(-1)[0]) if hasattr(i, "numpy") else int(i)


def create_array(dtype: Any) -> Any:
    """An empty tensor array of ``dtype`` items (a Python list in dygraph mode)."""
    if _eager():
        return []
    helper = LayerHelper("array")
    return helper.create_variable(
        name=f"{helper.name}.out",
        type=VarType.LOD_TENSOR_ARRAY,
        dtype=convert_dtype(dtype),
    )


def array_write(x: Any, i: Any, array: Any = None) -> Any:
    """``array[i] = x``; creates the array when ``array`` is None. Returns the array."""
    if _eager():
        check_variable("array_write", "x", x)
        array = [] if array is None else array
        _check_array("array_write", "array", array)
        k = _eager_index(i)
        if k < len(array):
            array[k] = x
        elif k == len(array):
            array.append(x)
        else:
            raise ArgumentError(
                "array_write", f"index {k} is past the end of an array of {len(array)} items"
            )
        return array
    check_variable("array_write", "x", x)
    _check_index("array_write", i)
    helper = LayerHelper("array_write")
    if array is None:
        array = create_array(x.dtype)
    _check_array("array_write", "array", array)
    helper.append_op("write_to_array", {"X": [x], "I": [i]}, {"Out": [array]})
    return array


def array_read(array: Any, i: Any) -> Any:
    """The item at index ``i`` of ``array``."""
    _check_array("array_read", "array", array)
    if _eager():
        return array[_eager_index(i)]
    _check_index("array_read", i)
    helper = LayerHelper("array_read")
    out = helper.create_variable_for_type_inference(array.dtype)
    helper.append_op("read_from_array", {"X": [array], "I": [i]}, {"Out": [out]})
    return out


def array_length(array: Any) -> Any:
    """The number of items of ``array`` (an int64 tensor of shape [1])."""
    _check_array("array_length", "array", array)
    if _eager():
        from oar.layers.tensor import fill_constant

        return fill_constant([1], "int64", len(array))
    helper = LayerHelper("array_length")
    out = helper.create_variable_for_type_inference("int64")
    out.stop_gradient = True
    helper.append_op("lod_array_length", {"X": [array]}, {"Out": [out]})
    return out


def tensor_array_to_tensor(input: Any, axis: int = 1, name: Any = None, use_stack: bool = False):
    """Concatenate (or stack, with ``use_stack``) the items of ``input`` along ``axis``.

    Returns ``(out, out_index)``: the tensor and each item's size along ``axis``.
    """
    _check_array("tensor_array_to_tensor", "input", input)
    if _eager():
        from oar.layers.manip import concat, stack
        from oar.layers.tensor import assign

        out = stack(input, axis=axis) if use_stack else concat(input, axis=axis)
        sizes = [1 if use_stack else int(v.shape[axis]) for v in input]
        return out, assign(np.asarray(sizes, dtype="int32"))
    helper = LayerHelper("tensor_array_to_tensor", name=name)
    out = helper.create_variable_for_type_inference(input.dtype)
    index = helper.create_variable_for_type_inference("int32", stop_gradient=True)
    helper.append_op(
        "tensor_array_to_tensor",
        {"X": [input]},
        {"Out": [out], "OutIndex": [index]},
        {"axis": int(axis), "use_stack": bool(use_stack)},
    )
    return out, index
