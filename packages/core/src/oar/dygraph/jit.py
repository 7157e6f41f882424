"""``TracedLayer``: run a dygraph Layer once and keep what it did as a static Program.

The tracer records every op of the forward pass (type, variables, attrs);
replaying that list into a Program gives the same graph the static API would
build, which the static Executor runs (and ``save_inference_model`` saves).
Parameters stay shared: each call feeds the Layer's current parameter values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oar.dygraph.dygraph_to_static import declarative, dygraph_to_static_func
from oar.dygraph.varbase import ParamBase, VarBase
from oar.framework.mode import _dygraph_tracer

__all__ = ["TracedLayer", "declarative", "dygraph_to_static_func"]


class TracedLayer:
    """A static Program captured from one dygraph forward pass; call it with numpy inputs."""

    def __init__(self, program: Any, parameters: dict, feed_names: list, fetch_names: list) -> None:
        self._program = program
        self._params = parameters
        self._feed_names = feed_names
        self._fetch_names = fetch_names
        from oar.executor import Executor
        from oar.places import CPUPlace
        from oar.scope import Scope

        self._exe = Executor(CPUPlace())
        self._scope = Scope()

    @property
    def program(self) -> Any:
        return self._program

    def set_strategy(self, build_strategy: Any = None, exec_strategy: Any = None) -> None:
        """Fluid 1.8's knobs for running the traced program (kept; the CPU plan needs neither)."""
        from oar.executor import BuildStrategy, ExecutionStrategy

        for value, cls, what in (
            (build_strategy, BuildStrategy, "build_strategy"),
            (exec_strategy, ExecutionStrategy, "exec_strategy"),
        ):
            if value is not None and not isinstance(value, cls):
                raise TypeError(
                    f"TracedLayer.set_strategy: {what} must be a {cls.__name__}, "
                    f"given {type(value).__name__}"
                )
        self._build_strategy = build_strategy
        self._exec_strategy = exec_strategy

    @staticmethod
    def trace(layer: Any, inputs: Any) -> tuple:
        """``(dygraph outputs, TracedLayer)`` from running ``layer(*inputs)`` once."""
        tracer = _dygraph_tracer()
        if tracer is None:
            raise RuntimeError(
                "TracedLayer.trace needs dygraph mode (inside fluid.dygraph.guard())"
            )
        ins = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        for i, v in enumerate(ins):
            if not isinstance(v, VarBase):
                raise TypeError(
                    f"TracedLayer.trace: inputs[{i}] must be a dygraph variable, given {type(v).__name__}"
                )
        old, tracer._recorder = tracer._recorder, []
        try:
            outs = layer(*ins)
            ops = tracer._recorder
        finally:
            tracer._recorder = old
        out_list = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        program, params, feeds, fetches = _to_program(ops, ins, out_list)
        return outs, TracedLayer(program, params, feeds, fetches)

    def __call__(self, inputs: Any) -> list:
        arrays = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(arrays) != len(self._feed_names):
            raise ValueError(
                f"TracedLayer: {len(self._feed_names)} inputs traced, {len(arrays)} given"
            )
        for name, p in self._params.items():
            self._scope.var(name).get_tensor().set(p._value)
        feed = {
            n: (a.numpy() if isinstance(a, VarBase) else np.asarray(a))
            for n, a in zip(self._feed_names, arrays)
        }
        from oar.framework.mode import _set_tracer

        old = _set_tracer(None)  # the static executor runs in static mode
        try:
            return self._exe.run(
                self._program, feed=feed, fetch_list=self._fetch_names, scope=self._scope
            )
        finally:
            _set_tracer(old)

    def save_inference_model(
        self, dirname: str, feed: list | None = None, fetch: list | None = None
    ) -> None:
        """Save the traced program and parameters with ``fluid.io.save_inference_model`` (oar-io)."""
        feed_names = [self._feed_names[i] for i in feed] if feed else self._feed_names
        fetch_vars = [
            self._program.global_block().var(self._fetch_names[i])
            for i in (fetch or range(len(self._fetch_names)))
        ]
        save_with_parameters(
            dirname, self._program, feed_names, fetch_vars, self._exe, self._scope, self._params
        )


def save_with_parameters(
    dirname: str,
    program: Any,
    feed_names: list,
    fetch_vars: list,
    exe: Any,
    scope: Any,
    params: dict,
) -> None:
    """``fluid.io.save_inference_model`` of ``program`` with the dygraph ``params``
    (``{static name: ParamBase}``) as its parameter values."""
    from oar import fluid
    from oar.framework.mode import _set_tracer

    for name, p in params.items():
        scope.var(name).get_tensor().set(p._value)
    old = _set_tracer(None)
    try:
        with fluid.scope_guard(scope):
            fluid.io.save_inference_model(
                dirname, feed_names, fetch_vars, exe, main_program=program
            )
    finally:
        _set_tracer(old)


def _to_program(ops: list, inputs: list, outputs: list) -> tuple:
    from oar.framework.program import Program

    program = Program()
    block = program.global_block()
    names: dict = {}
    params: dict = {}
    feeds = []
    for i, v in enumerate(inputs):
        name = f"traced_input_{i}"
        names[id(v)] = name
        block.create_var(name=name, shape=v.shape, dtype=v.dtype, is_data=True, stop_gradient=True)
        feeds.append(name)

    def static(v: VarBase) -> str:
        n = names.get(id(v))
        if n is not None:
            return n
        if isinstance(v, ParamBase) or v.persistable:
            n = v.name
            if not block.has_var(n):
                block.create_parameter(
                    name=n, shape=v.shape, dtype=v.dtype, trainable=getattr(v, "trainable", False)
                )
            params[n] = v
        else:
            n = f"traced_tmp_{len(names)}"
            block.create_var(name=n, dtype=v.dtype if v._value is not None else None)
        names[id(v)] = n
        return n

    for type_, ins, outs, attrs in ops:
        sin = {slot: [static(v) for v in vs] for slot, vs in ins.items() if vs}
        sout = {slot: [static(v) for v in vs] for slot, vs in outs.items() if vs}
        block.append_op(type_, sin, sout, dict(attrs))
    fetches = [static(v) for v in outputs]
    return program, params, feeds, fetches
