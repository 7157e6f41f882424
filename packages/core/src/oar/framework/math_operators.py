"""Python operators (``a + b``, ``x * 2``, ``a < b``, ``-x``, ``a @ b``) for static and eager variables.

Fluid patches these onto both variable kinds; here one mixin holds them and
each kind says how to build a binary op (``_binary``) and a scale (``_scale``).
Static Variables hand the op to the current builder (:func:`build_binary`);
eager VarBases take their own short path to the tracer
(``oar.dygraph.math_ops``). Both read one table, :data:`SCALAR_FORMS`, for the
cheap ``scale`` forms of ``x + 2``, ``2 - x``, ``x * 2``, ``x / 2``.
``==``/``!=`` build ``equal``/``not_equal`` ops like Fluid's; ``__hash__`` stays
identity-based so variables still work in sets and dicts (seed 000 fetches
``{g_img}``). Comparing with anything that is not a variable or a number
(``None``, a string) falls back to Python's identity comparison.
"""

from __future__ import annotations

from typing import Any

from oar.framework import unique_name

COMPARE_OPS = frozenset(
    ("less_than", "less_equal", "greater_than", "greater_equal", "equal", "not_equal")
)

# ``bool()`` of a static ``a == b`` / ``a != b`` result: is ``a is b`` (True) or ``a is not b``
_IDENTITY_TRUTH = {"equal": True, "not_equal": False}

# op type -> (scalar v, reverse) -> (scale, bias) of the ``scale`` op that computes it, or None
SCALAR_FORMS: dict = {
    "elementwise_add": lambda v, reverse: (1.0, v),
    "elementwise_sub": lambda v, reverse: (-1.0, v) if reverse else (1.0, -v),
    "elementwise_mul": lambda v, reverse: (v, 0.0),
    "elementwise_div": lambda v, reverse: None if reverse else (1.0 / v, 0.0),
}


def scalar_form(op_type: str, value: float, reverse: bool) -> tuple | None:
    """(scale, bias) if ``x <op> value`` (or ``value <op> x``) is one ``scale`` op, else None."""
    form = SCALAR_FORMS.get(op_type)
    return None if form is None else form(value, reverse)


def build_scale(builder: Any, x: Any, scale: float, bias: float = 0.0) -> Any:
    """``x * scale + bias`` as one ``scale`` op through ``builder``."""
    out = builder.create_tmp_variable(unique_name.generate("scale"), x.dtype)
    builder.append_op(
        "scale",
        {"X": [x]},
        {"Out": [out]},
        {"scale": float(scale), "bias": float(bias), "bias_after_scale": True},
    )
    return out


def build_binary(builder: Any, x: Any, other: Any, op_type: str, reverse: bool = False) -> Any:
    """``x <op> other`` (``other <op> x`` if ``reverse``) as ops through ``builder``."""
    if not builder.is_variable(other):
        if not isinstance(other, (int, float)):
            return NotImplemented
        v = float(other)
        form = scalar_form(op_type, v, reverse)
        if form is not None:
            return build_scale(builder, x, *form)
        other = builder.const(v, x)
    a, b = (other, x) if reverse else (x, other)
    if op_type == "matmul":
        attrs: dict = {"transpose_X": False, "transpose_Y": False, "alpha": 1.0}
    else:
        attrs = {"axis": -1} if op_type.startswith("elementwise") else {}
    dtype = "bool" if op_type in COMPARE_OPS else a.dtype
    out = builder.create_tmp_variable(unique_name.generate(op_type), dtype)
    builder.append_op(op_type, {"X": [a], "Y": [b]}, {"Out": [out]}, attrs)
    if op_type in _IDENTITY_TRUTH and builder.is_variable(a) and builder.is_variable(b):
        # bool(a == b) of two static variables is ``a is b``: ``in``, list.index and
        # list.remove on lists of variables keep meaning identity
        out._identity_truth = (a is b) is _IDENTITY_TRUTH[op_type]
    return out


class MathOperators:
    __slots__ = ()

    def _binary(self, other: Any, op: str, reverse: bool = False) -> Any:
        raise NotImplementedError

    def _scale(self, factor: float) -> Any:
        raise NotImplementedError

    def __add__(self, o):
        return self._binary(o, "elementwise_add")

    def __radd__(self, o):
        return self._binary(o, "elementwise_add", True)

    def __sub__(self, o):
        return self._binary(o, "elementwise_sub")

    def __rsub__(self, o):
        return self._binary(o, "elementwise_sub", True)

    def __mul__(self, o):
        return self._binary(o, "elementwise_mul")

    def __rmul__(self, o):
        return self._binary(o, "elementwise_mul", True)

    def __truediv__(self, o):
        return self._binary(o, "elementwise_div")

    def __rtruediv__(self, o):
        return self._binary(o, "elementwise_div", True)

    __div__ = __truediv__

    def __pow__(self, o):
        return self._binary(o, "elementwise_pow")

    def __rpow__(self, o):
        return self._binary(o, "elementwise_pow", True)

    def __mod__(self, o):
        return self._binary(o, "elementwise_mod")

    def __floordiv__(self, o):
        return self._binary(o, "elementwise_floordiv")

    def __matmul__(self, o):
        return self._binary(o, "matmul")

    def __neg__(self):
        return self._scale(-1.0)

    def __lt__(self, o):
        return self._binary(o, "less_than")

    def __le__(self, o):
        return self._binary(o, "less_equal")

    def __gt__(self, o):
        return self._binary(o, "greater_than")

    def __ge__(self, o):
        return self._binary(o, "greater_equal")

    def __eq__(self, o):
        return self._binary(o, "equal")

    def __ne__(self, o):
        return self._binary(o, "not_equal")

    __hash__ = object.__hash__
