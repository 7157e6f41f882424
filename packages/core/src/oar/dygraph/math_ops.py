"""Python operators on eager variables: a short path straight to the tracer.

``a + b`` on eager variables is the hottest call in imperative code, so it
skips LayerHelper and goes to ``Tracer.trace_op`` with the same op types and
attrs the static ``math_op_patch`` uses.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oar.dygraph.varbase import VarBase
from oar.errors import OpRuntimeError
from oar.framework.mode import _dygraph_tracer

_SCALARS = (int, float, np.integer, np.floating)
_COMPARE = frozenset(
    ("less_than", "less_equal", "greater_than", "greater_equal", "equal", "not_equal")
)
_ELEMENTWISE_ATTRS = {"axis": -1}  # never mutated: the tracer completes attrs into a new dict
_NO_ATTRS: dict = {}
_completed: dict = {}  # op type -> its completed attrs for the operator path


def scale(x: VarBase, factor: float, bias: float = 0.0) -> VarBase:
    tracer = _dygraph_tracer()
    attrs = tracer.complete_attrs(
        "scale", {"scale": float(factor), "bias": float(bias), "bias_after_scale": True}
    )
    return tracer.trace_simple("scale", {"X": [x]}, attrs)


def binary(x: VarBase, other: Any, op_type: str, reverse: bool = False) -> Any:
    tracer = _dygraph_tracer()
    if tracer is None:
        raise RuntimeError(
            f"'{op_type}' on a dygraph variable needs dygraph mode (fluid.dygraph.guard())"
        )
    if not isinstance(other, VarBase):
        if isinstance(other, _SCALARS) and not isinstance(other, bool):
            v = float(other)
            if op_type == "elementwise_add":
                return scale(x, 1.0, v)
            if op_type == "elementwise_sub":
                return scale(x, -1.0, v) if reverse else scale(x, 1.0, -v)
            if op_type == "elementwise_mul":
                return scale(x, v)
            if op_type == "elementwise_div" and not reverse:
                return scale(x, 1.0 / v)
            other = VarBase(np.full([1], v, dtype=x.dtype))
        elif isinstance(other, np.ndarray):
            other = VarBase(other.astype(x.dtype, copy=False))
        else:
            return NotImplemented
    a, b = (other, x) if reverse else (x, other)
    va, vb = a._value, b._value
    if (
        va.__class__ is np.ndarray
        and vb.__class__ is np.ndarray
        and va.dtype is not vb.dtype
        and va.dtype != vb.dtype
    ):
        from oar.errors import DtypeError, at_user_line

        # Fluid 1.8 rejects mixed dtypes here too; numpy would upcast silently
        raise DtypeError(
            f"'{op_type}' on dygraph variables of different dtypes ({a.dtype} and {b.dtype}); "
            f"nothing is cast: use .astype() on one side{at_user_line()}"
        )
    if op_type == "matmul":
        from oar.layers.math import matmul

        return matmul(a, b)
    attrs = _completed.get(op_type)
    if attrs is None:
        attrs = _completed[op_type] = tracer.complete_attrs(
            op_type, _NO_ATTRS if op_type in _COMPARE else _ELEMENTWISE_ATTRS
        )
    try:
        return tracer.trace_simple(op_type, {"X": [a], "Y": [b]}, attrs)
    except OpRuntimeError as exc:
        # failure path only: say it with the op's shape inference, and name the user's line
        from oar.dygraph.explain import explain_failure
        from oar.errors import at_user_line
        from oar.plugins import registries

        explain_failure(op_type, registries().ops.get(op_type), {"X": [a], "Y": [b]}, attrs)
        exc.args = (str(exc.args[0]) + at_user_line(),) + tuple(exc.args[1:])
        raise
