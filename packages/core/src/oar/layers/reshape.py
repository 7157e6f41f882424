"""reshape (module named apart from the `shape` layer it would shadow in `oar.layers`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from oar.errors import ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = ["reshape"]


def reshape(
    x: Any,
    shape: Sequence,
    actual_shape: Any = None,
    act: Any = None,
    inplace: bool = False,
    name: str | None = None,
) -> Any:
    """``x`` with a new shape: 0 copies the input dim, one -1 is inferred; entries may be Variables."""
    helper = LayerHelper("reshape2", act=act, name=name)
    check_variable("reshape", "x", x)
    if not isinstance(shape, (list, tuple)) and not is_variable(shape):
        raise ArgumentTypeError(
            "reshape", f"shape must be a list, tuple or Variable, given {type(shape).__name__}"
        )
    if not is_variable(shape):
        bad = [
            d
            for d in shape
            if not is_variable(d) and (isinstance(d, bool) or not isinstance(d, (int, np.integer)))
        ]
        if bad:
            raise ArgumentTypeError(
                "reshape", f"shape entries must be ints or [1] int Variables, given {list(shape)}"
            )
    inputs: dict = {"X": [x]}
    attrs: dict = {}
    if is_variable(shape):
        inputs["Shape"] = [shape]
    elif any(is_variable(d) for d in shape):
        attrs["shape"] = [-1 if is_variable(d) else int(d) for d in shape]
        inputs["ShapeTensor"] = [d if is_variable(d) else _const(int(d)) for d in shape]
    else:
        attrs["shape"] = [int(d) for d in shape]
    if actual_shape is not None:
        inputs["Shape"] = [actual_shape]
    out = helper.create_variable_for_type_inference(x.dtype)
    xshape = helper.create_variable_for_type_inference(x.dtype, stop_gradient=True)
    helper.append_op("reshape2", inputs, {"Out": [out], "XShape": [xshape]}, attrs)
    return helper.append_activation(out)


def _const(v: int) -> Any:
    from oar.layers.tensor import fill_constant

    return fill_constant([1], "int32", v)
