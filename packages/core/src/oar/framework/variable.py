"""Static-graph variables and parameters: names with a shape and a dtype, no values.

Values live in a :class:`oar.Scope` under the variable's name; a Variable is a
description that ops refer to by name.
"""

from __future__ import annotations

from typing import Any

import attrs

from oar.framework import unique_name
from oar.framework.dtypes import VarType, convert_dtype
from oar.framework.math_operators import MathOperators, build_binary, build_scale
from oar.framework.mode import current_builder


def _shape(value: Any) -> tuple | None:
    if value is None:
        return None
    return tuple(int(d) for d in value)


@attrs.define(eq=False, repr=False)
class Variable(MathOperators):
    """A named tensor slot in a :class:`Block`.

    ``shape`` uses ``-1`` for a dim known only at run time (usually the batch);
    ``lod_level`` > 0 marks a sequence input (a LoDTensor).
    """

    block: Any
    name: str
    shape: tuple | None = attrs.field(default=None, converter=_shape)
    dtype: str | None = attrs.field(
        default=None, converter=lambda d: None if d is None else convert_dtype(d)
    )
    lod_level: int = 0
    persistable: bool = False
    stop_gradient: bool = False
    type: str = VarType.LOD_TENSOR
    need_check_feed: bool = False
    is_data: bool = False
    error_clip: Any = None
    # set on the result of ``a == b`` / ``a != b`` of two variables: what bool() of it says
    _identity_truth: bool | None = attrs.field(default=None, init=False, repr=False)

    def __bool__(self) -> bool:
        """True, as in Fluid, except for ``a == b`` / ``a != b`` of two variables: identity."""
        return True if self._identity_truth is None else self._identity_truth

    # --- descriptions -------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "kind": "variable",
            "name": self.name,
            "shape": None if self.shape is None else list(self.shape),
            "dtype": self.dtype,
            "lod_level": self.lod_level,
            "persistable": self.persistable,
            "stop_gradient": self.stop_gradient,
            "type": self.type,
            "need_check_feed": self.need_check_feed,
            "is_data": self.is_data,
        }

    @property
    def grad_name(self) -> str:
        """The name of this variable's gradient (``<name>@GRAD``)."""
        return self.name + "@GRAD"

    def to_string(self, throw_on_error: bool = True, with_details: bool = False) -> str:
        kind = type(self).__name__.lower()
        extra = ""
        if with_details:
            extra = f", stop_gradient={self.stop_gradient}, lod_level={self.lod_level}"
        tag = " persistable" if self.persistable else ""
        return f"{kind}{tag} {self.name} : {self.type}(shape={list(self.shape or [])}, dtype={self.dtype}{extra})"

    __str__ = to_string

    def __repr__(self) -> str:
        return self.to_string()

    @property
    def desc(self) -> Variable:
        return self

    def numel(self) -> int:
        n = 1
        for d in self.shape or ():
            n *= d
        return n

    # --- Python operators (see MathOperators): ops handed to the current builder --------------
    def astype(self, dtype: Any) -> Variable:
        builder = current_builder()
        dtype = convert_dtype(dtype)
        out = builder.create_tmp_variable(unique_name.generate("cast"), dtype)
        builder.append_op(
            "cast", {"X": [self]}, {"Out": [out]}, {"in_dtype": self.dtype, "out_dtype": dtype}
        )
        return out

    def _binary(self, other: Any, op: str, reverse: bool = False) -> Variable:
        return build_binary(current_builder(), self, other, op, reverse)

    def _scale(self, factor: float) -> Variable:
        return build_scale(current_builder(), self, factor)

    __hash__ = object.__hash__


@attrs.define(eq=False, repr=False)
class Parameter(Variable):
    """A persistable, trainable variable created by a layer and initialised by the startup program.

    ``optimize_attr['learning_rate']`` multiplies the optimizer's rate;
    ``regularizer`` overrides the optimizer's regularization for this parameter.
    """

    trainable: bool = True
    optimize_attr: dict = attrs.field(factory=lambda: {"learning_rate": 1.0})
    regularizer: Any = None
    gradient_clip_attr: Any = None
    do_model_average: bool | None = None
    is_distributed: bool = False

    def __attrs_post_init__(self):
        self.persistable = True
        if not self.trainable:
            self.stop_gradient = True

    def to_dict(self) -> dict:
        d = super().to_dict()
        d.update(
            kind="parameter",
            trainable=self.trainable,
            optimize_attr=dict(self.optimize_attr),
            regularizer=_describe(self.regularizer),
            do_model_average=self.do_model_average,
            is_distributed=self.is_distributed,
        )
        return d

    __hash__ = object.__hash__


def _describe(obj: Any) -> Any:
    """A JSON-able description of a regularizer or clip object (for display and round trip)."""
    if obj is None:
        return None
    to_dict = getattr(obj, "to_dict", None)
    if to_dict is not None:
        return to_dict()
    return {"class": type(obj).__name__}
