"""Python operators (``a + b``, ``x * 2``, ``a < b``, ``-x``, ``a @ b``) for static and eager variables.

Fluid patches these onto both variable kinds; here one mixin holds them and
each kind says how to build a binary op (``_binary``) and a scale (``_scale``):
static Variables append ops to the program, eager VarBases run them now.
``==``/``!=`` stay identity comparisons so variables work in sets and dicts
(seed 000 fetches ``{g_img}``).
"""

from __future__ import annotations

from typing import Any


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

    __hash__ = object.__hash__
