"""Blocks: an ordered list of ops and the variables they name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from oar.framework.callsite import user_callsite
from oar.framework.operator import Operator, make_operator
from oar.framework.platform import current_device
from oar.framework.variable import Parameter, Variable


@attrs.define(eq=False, repr=False)
class Block:
    program: Any
    idx: int
    parent_idx: int = -1
    forward_block_idx: int = -1
    vars: dict = attrs.field(factory=dict)
    ops: list = attrs.field(factory=list)

    # --- variables ------------------------------------------------------------------------
    def create_var(self, **kwargs: Any) -> Variable:
        """Create (or return the existing) variable ``name`` in this block."""
        name = kwargs.get("name")
        if name is None:
            from oar.framework import unique_name

            name = kwargs["name"] = unique_name.generate("_generated_var")
        if name in self.vars:
            return self.vars[name]
        kwargs.pop("initializer", None)
        var = Variable(self, **kwargs)
        self.vars[name] = var
        self.program._bump()
        return var

    def create_parameter(self, **kwargs: Any) -> Parameter:
        initializer = kwargs.pop("initializer", None)
        param = Parameter(self, **kwargs)
        self.vars[param.name] = param
        self.program._bump()
        if initializer is not None:
            initializer(param, self)
        return param

    def var(self, name: str) -> Variable:
        if not isinstance(name, str):
            raise TypeError(f"var() takes a variable name (str), given {type(name).__name__}")
        try:
            return self.vars[name]
        except KeyError:
            raise ValueError(f"variable '{name}' is not in block {self.idx}") from None

    def has_var(self, name: str) -> bool:
        return name in self.vars

    def _find_var_recursive(self, name: str) -> Variable | None:
        block = self
        while True:
            v = block.vars.get(name)
            if v is not None:
                return v
            if block.parent_idx < 0:
                return None
            block = self.program.blocks[block.parent_idx]

    def _var_recursive(self, name: str) -> Variable:
        v = self._find_var_recursive(name)
        if v is None:
            raise ValueError(f"variable '{name}' is not in block {self.idx} or its parents")
        return v

    def _remove_var(self, name: str) -> None:
        self.vars.pop(name, None)
        self.program._bump()

    def all_parameters(self) -> list:
        return [v for v in self.vars.values() if isinstance(v, Parameter)]

    iter_parameters = all_parameters

    # --- ops --------------------------------------------------------------------------------
    def append_op(
        self,
        type: str,
        inputs: Mapping | None = None,
        outputs: Mapping | None = None,
        attrs: Mapping | None = None,
        **kw: Any,
    ) -> Operator:
        op = self._new_op(type, inputs, outputs, attrs, kw)
        self.ops.append(op)
        self.program._bump()
        return op

    def _prepend_op(self, type: str, inputs=None, outputs=None, attrs=None, **kw) -> Operator:
        return self._insert_op(0, type, inputs, outputs, attrs, **kw)

    def _insert_op(
        self, index: int, type: str, inputs=None, outputs=None, attrs=None, **kw
    ) -> Operator:
        op = self._new_op(type, inputs, outputs, attrs, kw)
        self.ops.insert(index, op)
        self.program._bump()
        return op

    def _remove_op(self, index: int, end: int | None = None) -> None:
        del self.ops[index : (index + 1 if end is None else end)]
        self.program._bump()

    def _new_op(self, type, inputs, outputs, attrs, kw) -> Operator:
        attrs = dict(attrs or {})
        role = self.program._current_role
        attrs.setdefault("op_role", role)
        if self.program._name_scope:
            attrs.setdefault("op_namescope", self.program._name_scope)
        device = current_device()
        if device is not None:
            attrs.setdefault("op_device", device)
        callsite = kw.get("callsite") or user_callsite()
        return make_operator(
            self, type, inputs, outputs, attrs, callsite, infer=kw.get("infer", True)
        )

    def to_string(self, throw_on_error: bool = True, with_details: bool = False) -> str:
        lines = [f"block {{ idx: {self.idx}, parent: {self.parent_idx}"]
        for v in self.vars.values():
            lines.append("  " + v.to_string(throw_on_error, with_details))
        for op in self.ops:
            lines.append("  " + op.to_string())
        lines.append("}")
        return "\n".join(lines)

    __str__ = to_string

    def __repr__(self) -> str:
        return f"<Block {self.idx}: {len(self.vars)} vars, {len(self.ops)} ops>"
