"""Operators in the IR: an op type, variable names per slot, attrs, and the user's line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from oar.errors import DtypeError, OarError, OpError, ShapeError, describe_var, where
from oar.registry import EMPTY_VAR, VarMeta


class OpRole:
    """Fluid's op roles, kept in the ``op_role`` attr so clone(for_test) can drop training ops."""

    Forward = 0
    Backward = 1
    Optimize = 2
    RPC = 4
    Dist = 8
    LRSched = 16
    Loss = 256


def _names(value: Any) -> list:
    """Slot values may be a Variable, a name, or a list of either."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [v if isinstance(v, str) else v.name for v in value]
    return [value if isinstance(value, str) else value.name]


def _json_attr(value: Any) -> Any:
    """Attrs are stored in JSON-able form so programs round-trip exactly."""
    import numpy as np

    if isinstance(value, tuple):
        return [_json_attr(v) for v in value]
    if isinstance(value, list):
        return [_json_attr(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_json_attr(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    return value


@attrs.define(eq=False, repr=False)
class Operator:
    """One op in a block. Inputs and outputs map slot -> list of variable names."""

    block: Any
    type: str
    inputs: dict = attrs.field(factory=dict)
    outputs: dict = attrs.field(factory=dict)
    attrs: dict = attrs.field(factory=dict)
    callsite: tuple | None = None

    def input(self, slot: str) -> list:
        return list(self.inputs.get(slot, ()))

    def output(self, slot: str) -> list:
        return list(self.outputs.get(slot, ()))

    @property
    def input_names(self) -> list:
        return list(self.inputs)

    @property
    def output_names(self) -> list:
        return list(self.outputs)

    @property
    def input_arg_names(self) -> list:
        return [n for ns in self.inputs.values() for n in ns if n != EMPTY_VAR]

    @property
    def output_arg_names(self) -> list:
        return [n for ns in self.outputs.values() for n in ns if n != EMPTY_VAR]

    def attr(self, name: str) -> Any:
        return self.attrs.get(name)

    def has_attr(self, name: str) -> bool:
        return name in self.attrs

    def _set_attr(self, name: str, value: Any) -> None:
        self.attrs[name] = _json_attr(value)
        self.block.program._bump()

    set_attr = _set_attr

    @property
    def attr_names(self) -> list:
        return list(self.attrs)

    def _rename_input(self, old: str, new: str) -> None:
        for slot, ns in self.inputs.items():
            self.inputs[slot] = [new if n == old else n for n in ns]
        self.block.program._bump()

    def _rename_output(self, old: str, new: str) -> None:
        for slot, ns in self.outputs.items():
            self.outputs[slot] = [new if n == old else n for n in ns]
        self.block.program._bump()

    @property
    def idx(self) -> int:
        return self.block.ops.index(self)

    def to_dict(self) -> dict:
        d = {
            "type": self.type,
            "inputs": {k: list(v) for k, v in self.inputs.items()},
            "outputs": {k: list(v) for k, v in self.outputs.items()},
            "attrs": dict(self.attrs),
        }
        return d

    def to_string(self, throw_on_error: bool = True) -> str:
        outs = ", ".join(f"{k}={v}" for k, v in self.outputs.items())
        ins = ", ".join(f"{k}={v}" for k, v in self.inputs.items())
        shown = {k: v for k, v in self.attrs.items() if not k.startswith("op_")}
        return f"{{{outs}}} = {self.type}(inputs={{{ins}}}, {shown})"

    __str__ = to_string

    def __repr__(self) -> str:
        return self.to_string()

    def where(self) -> str:
        return where(self.callsite)


def make_operator(
    block: Any,
    type: str,
    inputs: Mapping | None,
    outputs: Mapping | None,
    attrs_: Mapping | None,
    callsite: tuple | None,
    infer: bool = True,
) -> Operator:
    """Validate against the op definition, fill attr defaults, infer output shapes."""
    from oar.plugins import registries

    opdef = registries().ops.get(type)
    ins = {k: _names(v) for k, v in (inputs or {}).items() if v is not None}
    outs = {k: _names(v) for k, v in (outputs or {}).items() if v is not None}
    try:
        for slot in ins:
            if slot not in opdef.input_names:
                raise ValueError(
                    f"unknown input slot '{slot}'; the op takes {list(opdef.input_names)}"
                )
        for slot in outs:
            if slot not in opdef.output_names:
                raise ValueError(
                    f"unknown output slot '{slot}'; the op gives {list(opdef.output_names)}"
                )
        for s in opdef.inputs:
            if not s.dispensable and not ins.get(s.name):
                raise ValueError(f"input slot '{s.name}' is required but not given")
            if not s.duplicable and len(ins.get(s.name, ())) > 1:
                raise ValueError(f"input slot '{s.name}' takes one variable, given {ins[s.name]}")
        full_attrs = {k: _json_attr(v) for k, v in opdef.complete_attrs(attrs_).items()}
    except OarError as exc:
        raise exc.with_context(callsite=callsite, created=True) from None
    except ValueError as exc:
        raise OpError(str(exc), op=type, callsite=callsite, created=True) from None
    op = Operator(block, type, ins, outs, full_attrs, callsite)
    if infer and opdef.infer_shape is not None:
        run_infer_shape(block, op, opdef)
    return op


def _meta(block: Any, name: str) -> VarMeta | None:
    var = block._find_var_recursive(name)
    if var is None or var.shape is None or var.dtype is None:
        return None
    return VarMeta(tuple(var.shape), var.dtype, var.lod_level)


def run_infer_shape(block: Any, op: Operator, opdef: Any) -> None:
    """Run the op's shape inference now, when shapes are known, and record the results."""
    ins: dict = {}
    for s in opdef.inputs:
        names = op.inputs.get(s.name, [])
        metas = [_meta(block, n) for n in names]
        if any(m is None for m in metas):
            return  # an input of unknown shape: nothing to check yet
        ins[s.name] = metas if s.duplicable else (metas[0] if metas else None)
    try:
        result = opdef.infer_shape(ins, op.attrs) or {}
    except (ValueError, TypeError) as exc:
        detail = ", ".join(
            f"{slot}={describe_var(n, _meta(block, n))}"
            for slot, ns in op.inputs.items()
            for n in ns
        )
        cls = DtypeError if isinstance(exc, TypeError) else ShapeError
        raise cls(
            f"{exc}; inputs: {detail}", op=op.type, callsite=op.callsite, created=True
        ) from None
    for slot, metas in result.items():
        names = op.outputs.get(slot, [])
        if not isinstance(metas, (list, tuple)):
            metas = [metas]
        for n, m in zip(names, metas):
            if m is None or n == EMPTY_VAR:
                continue
            var = block._find_var_recursive(n)
            if var is None:
                continue
            if var.shape is None:
                var.shape = tuple(int(d) for d in m.shape)
            if var.dtype is None:
                var.dtype = m.dtype
            if m.lod_level and not var.lod_level:
                var.lod_level = m.lod_level
