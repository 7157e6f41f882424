"""Data layers: declare the variables a program is fed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oar.errors import ArgumentTypeError
from oar.framework.dtypes import VarType, convert_dtype
from oar.framework.program import default_main_program

__all__ = ["data"]


def data(
    name: str,
    shape: Sequence,
    append_batch_size: bool = True,
    dtype: Any = "float32",
    lod_level: int = 0,
    type: str = VarType.LOD_TENSOR,
    stop_gradient: bool = True,
) -> Any:
    """Declare a fed variable. ``shape`` is one sample's; a -1 batch dim is prepended
    unless ``append_batch_size=False`` or ``shape`` already holds a -1/None."""
    if not isinstance(name, str) or not name:
        raise ArgumentTypeError("data", f"name must be a non-empty str, given {name!r}")
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"data '{name}': shape must be a list or tuple, given {type_name(shape)}")
    shape = list(shape)
    for i, d in enumerate(shape):
        if d is None:
            shape[i] = -1
            append_batch_size = False
        elif not isinstance(d, int):
            raise TypeError(f"data '{name}': shape entries must be ints, given {shape!r}")
        elif d < 0:
            if d != -1:
                raise ValueError(
                    f"data '{name}': shape entries must be positive or -1, given {shape}"
                )
            append_batch_size = False
    if append_batch_size:
        shape = [-1] + shape
    if lod_level < 0:
        raise ValueError(f"data '{name}': lod_level must be >= 0, given {lod_level}")
    block = default_main_program().global_block()
    if name in block.vars:
        return block.vars[name]
    return block.create_var(
        name=name,
        shape=shape,
        dtype=convert_dtype(dtype),
        type=type,
        stop_gradient=stop_gradient,
        lod_level=lod_level,
        is_data=True,
        need_check_feed=False,
    )


def fluid_data(name: str, shape: Sequence, dtype: Any = "float32", lod_level: int = 0) -> Any:
    """``fluid.data``: the shape is taken as given (None/-1 = any) and feeds are checked exactly."""
    shape = [-1 if d is None else d for d in shape]
    var = data(name, shape, append_batch_size=False, dtype=dtype, lod_level=lod_level)
    var.need_check_feed = True
    return var


def type_name(x: Any) -> str:
    return type(x).__name__
