"""Dygraph layers while a static program is being built.

A user ``Layer`` runs its converted ``forward`` on static variables, with its
parameters swapped for static parameters of the program (same names; the run
feeds the ``ParamBase`` values). oar's own layers (``Linear``, ``Conv2D``...)
trace their ops through the dygraph tracer; here a :class:`BridgeTracer` takes
that place and appends each traced op to the program instead of running it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from oar.dygraph.tracer import Tracer
from oar.dygraph.varbase import ParamBase, VarBase
from oar.framework import unique_name
from oar.framework.program import default_main_program
from oar.framework.variable import Variable


class BuildContext:
    """One program being built: the static twin of each ``ParamBase`` met, and swapped tables."""

    current: BuildContext | None = None

    def __init__(self, program: Any) -> None:
        self.program = program
        self.params: dict = {}  # id(ParamBase) -> (ParamBase, static Parameter)
        self._swapped: list = []
        self.arrays: list = []  # tensor arrays a converted list starts as (empty each run)

    def param_var(self, p: ParamBase) -> Any:
        hit = self.params.get(id(p))
        if hit is not None:
            return hit[1]
        block = self.program.global_block()
        if block.has_var(p.name):
            var = block.var(p.name)
        else:
            var = block.create_parameter(
                name=p.name,
                shape=list(p.shape),
                dtype=p.dtype,
                trainable=bool(getattr(p, "trainable", True)),
            )
            var.stop_gradient = p.stop_gradient
        self.params[id(p)] = (p, var)
        return var

    def swap_parameters(self, layer: Any) -> None:
        table = layer.__dict__.get("_parameters")
        if not table:
            return
        for k, p in list(table.items()):
            if isinstance(p, ParamBase):
                table[k] = self.param_var(p)
                self._swapped.append((table, k, p))

    def restore(self) -> None:
        for table, k, p in reversed(self._swapped):
            table[k] = p
        self._swapped.clear()

    @contextlib.contextmanager
    def active(self) -> Iterator[BuildContext]:
        from oar.dygraph import layers

        old, old_hook = BuildContext.current, layers._static_call
        BuildContext.current = self
        layers._static_call = _layer_call
        try:
            yield self
        finally:
            BuildContext.current, layers._static_call = old, old_hook
            self.restore()


class _SymVar(VarBase):
    """A dygraph variable standing for a static variable inside a bridged layer."""

    __slots__ = ()

    def _var(self) -> Any:
        bridge = BridgeTracer.active
        assert bridge is not None, "a bridged variable used outside its layer call"
        return bridge.vars[id(self)][1]

    @property
    def shape(self) -> list:
        return list(self._var().shape)

    @property
    def dtype(self) -> str:
        return str(self._var().dtype)

    @property  # type: ignore[misc]
    def name(self) -> str:
        return self._var().name

    def numpy(self) -> Any:
        raise RuntimeError(
            f"variable '{self.name}' has no value while declarative builds its program"
        )


class BridgeTracer(Tracer):
    """Appends traced ops to the program being built (oar's own layers under ``declarative``)."""

    active: BridgeTracer | None = None

    def __init__(self, ctx: BuildContext, train_mode: bool, prefix: str = "jst_tmp") -> None:
        super().__init__()
        self.ctx = ctx
        self._train_mode = train_mode
        self.prefix = prefix  # of the names of the variables the ops make
        self.vars: dict = {}  # id(VarBase) -> (VarBase, static Variable)

    def wrap(self, x: Any) -> Any:
        if isinstance(x, Variable):
            v = VarBase(None)
            v.__class__ = _SymVar
            self.vars[id(v)] = (v, x)
            return v
        if isinstance(x, (list, tuple)):
            return type(x)(self.wrap(e) for e in x)
        return x

    def unwrap(self, x: Any) -> Any:
        if isinstance(x, VarBase) and id(x) in self.vars:
            return self.vars[id(x)][1]
        if isinstance(x, ParamBase):
            return self.ctx.param_var(x)
        if isinstance(x, (list, tuple)):
            return type(x)(self.unwrap(e) for e in x)
        return x

    def static(self, v: Any) -> Any:
        if isinstance(v, Variable):
            return v
        hit = self.vars.get(id(v))
        if hit is not None:
            return hit[1]
        if isinstance(v, ParamBase):
            return self.ctx.param_var(v)
        from oar import layers

        var = layers.assign(np.asarray(v._value))  # an eager constant made inside the layer
        self.vars[id(v)] = (v, var)
        return var

    def trace_op(
        self, type: str, inputs: dict, outputs: dict, attrs: dict, stop_gradient: bool = False
    ) -> None:
        block = default_main_program().current_block()
        sin = {s: [self.static(v) for v in _list(vs)] for s, vs in inputs.items() if vs}
        sout: dict = {}
        for slot, vs in outputs.items():
            if not vs:
                continue
            names = []
            for v in _list(vs):
                if isinstance(v, Variable) or id(v) in self.vars or isinstance(v, ParamBase):
                    names.append(self.static(v))
                    continue
                var = block.create_var(name=unique_name.generate(self.prefix), dtype=None)
                v.__class__ = _SymVar
                self.vars[id(v)] = (v, var)
                names.append(var)
            sout[slot] = names
        block.append_op(type, sin, sout, dict(attrs))

    def trace_simple(self, type: str, ins: dict, attrs: dict) -> VarBase:
        out = VarBase(None)
        self.trace_op(type, ins, {"Out": [out]}, attrs)
        return out

    def run_op(self, type: str, inputs: dict, outputs: dict, attrs: dict | None = None) -> None:
        self.trace_op(type, inputs, outputs, attrs or {})


def _list(vs: Any) -> list:
    return list(vs) if isinstance(vs, (list, tuple)) else [vs]


def _is_own_layer(layer: Any) -> bool:
    if getattr(type(layer), "_static_only", False):  # appends its ops itself (RowConv...)
        return False
    forward = type(layer).forward
    module = getattr(forward, "__module__", "") or ""
    return module.startswith("oar.") and not module.startswith("oar.dygraph.container")


def _bridged_call(layer: Any, ctx: BuildContext, inputs: tuple, kwargs: dict, prefix: str) -> Any:
    """Run one of oar's own layers with a :class:`BridgeTracer` in the tracer's place."""
    from oar.framework import mode

    bridge = BridgeTracer(ctx, getattr(layer, "training", True), prefix)
    old_active, BridgeTracer.active = BridgeTracer.active, bridge
    old, mode._tracer = mode._tracer, bridge
    try:
        out = layer._call(bridge.wrap(tuple(inputs)), bridge.wrap(kwargs) if kwargs else {})
        return bridge.unwrap(out)
    finally:
        mode._tracer = old
        BridgeTracer.active = old_active


def static_mode_call(layer: Any, inputs: tuple, kwargs: dict) -> Any:
    """``Layer.__call__`` outside ``dygraph.guard()``: append the layer's ops to the current
    program, as Fluid 1.8.5 does (``Linear``, ``Conv2D``... built under ``program_guard`` hold
    static parameters; calling them on static variables is a static layer call)."""
    if not _is_own_layer(layer):  # a user's forward is plain Python over static variables
        return layer._call(inputs, kwargs)
    ctx = BuildContext.current or BuildContext(default_main_program())
    return _bridged_call(layer, ctx, inputs, kwargs, layer.full_name() + ".tmp")


def _layer_call(layer: Any, inputs: tuple, kwargs: dict) -> Any:
    """``Layer.__call__`` while a program is built."""
    from oar.framework import mode

    ctx = BuildContext.current
    if isinstance(mode._tracer, BridgeTracer) or ctx is None:
        return layer._call(inputs, kwargs)
    if _is_own_layer(layer):
        return _bridged_call(layer, ctx, inputs, kwargs, "jst_tmp")
    ctx.swap_parameters(layer)
    from oar.dygraph.dygraph_to_static.call import converted_forward

    return layer._call(inputs, kwargs, forward=converted_forward(layer))
