"""Python operators on eager variables: a short path straight to the tracer.

``a + b`` on eager variables is the hottest call in imperative code, so it
skips the builder and goes to ``Tracer.trace_simple`` with the same op types,
attrs and scalar forms (``oar.framework.math_operators.SCALAR_FORMS``) the
static operators use.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oar.dygraph.varbase import VarBase
from oar.errors import DtypeError, OpRuntimeError, user_site
from oar.framework.math_operators import COMPARE_OPS as _COMPARE
from oar.framework.math_operators import SCALAR_FORMS
from oar.framework.mode import _dygraph_tracer

_IDENTITY_OPS = frozenset(("equal", "not_equal"))
_SCALARS = (int, float, np.integer, np.floating)
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
        if op_type in _IDENTITY_OPS:
            return NotImplemented  # outside dygraph mode ``==``/``!=`` are identity comparisons
        raise RuntimeError(
            f"'{op_type}' on a dygraph variable needs dygraph mode (fluid.dygraph.guard())"
        )
    if not isinstance(other, VarBase):
        if isinstance(other, _SCALARS) and not isinstance(other, bool):
            v = float(other)
            form = SCALAR_FORMS.get(op_type)
            form = form and form(v, reverse)
            if form:
                return scale(x, *form)
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
        # Fluid 1.8 rejects mixed dtypes here too; numpy would upcast silently
        raise DtypeError(
            f"'{op_type}' on dygraph variables of different dtypes ({a.dtype} and {b.dtype}); "
            f"nothing is cast: use .astype() on one side",
            callsite=user_site(),
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
        from oar.plugins import registries

        explain_failure(op_type, registries().ops.get(op_type), {"X": [a], "Y": [b]}, attrs)
        exc.with_context(callsite=user_site())
        raise
