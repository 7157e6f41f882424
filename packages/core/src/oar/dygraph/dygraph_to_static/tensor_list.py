"""Python lists appended in a tensor-dependent loop become tensor arrays.

``xs.append(v)`` converts to ``xs = _jst.convert_append(xs, v)``, so a list
appended in a loop is one of the loop's variables. When the loop's condition
is a tensor, the list enters ``while_loop`` as a tensor array (``create_array``
plus one ``array_write`` per item it already holds) and each ``append`` is an
``array_write`` at ``array_length``. ``layers.concat`` / ``layers.stack`` /
``len`` of such an array read it back (``tensor_array_to_tensor``).
"""

from __future__ import annotations

from typing import Any

from oar.framework.dtypes import VarType
from oar.framework.variable import Variable


def is_tensor_array(x: Any) -> bool:
    return isinstance(x, Variable) and x.type == VarType.LOD_TENSOR_ARRAY


def is_tensor_list(x: Any) -> bool:
    """A Python list a loop may turn into a tensor array (empty, or all tensors)."""
    return isinstance(x, list) and all(isinstance(e, Variable) for e in x)


def to_tensor_array(items: list, dtype: Any = None) -> Any:
    from oar import layers
    from oar.dygraph.dygraph_to_static.bridge import BuildContext

    dtype = dtype or (items[0].dtype if items else "float32")
    arr = layers.create_array(dtype)
    ctx = BuildContext.current
    if ctx is not None:  # the run starts it empty (no op writes it before the loop reads it)
        ctx.arrays.append(arr.name)
    for k, item in enumerate(items):
        layers.array_write(item, layers.fill_constant([1], "int64", k), arr)
    return arr


def convert_append(xs: Any, value: Any) -> Any:
    """``xs.append(value)``; returns ``xs`` (the converted code assigns it back)."""
    if is_tensor_array(xs):
        from oar import layers

        return layers.array_write(value, layers.array_length(xs), xs)
    xs.append(value)
    return xs


def array_aware(func: Any) -> Any:
    """``layers.concat`` / ``layers.stack`` that also read a tensor array."""
    from oar import layers

    if func is layers.concat:

        def concat(input: Any, axis: Any = 0, name: Any = None) -> Any:
            if is_tensor_array(input):
                return layers.tensor_array_to_tensor(input, axis=axis, name=name)[0]
            return func(input, axis, name)

        return concat
    if func is layers.stack:

        def stack(x: Any, axis: int = 0) -> Any:
            if is_tensor_array(x):
                return layers.tensor_array_to_tensor(x, axis=axis, use_stack=True)[0]
            return func(x, axis)

        return stack
    return func
