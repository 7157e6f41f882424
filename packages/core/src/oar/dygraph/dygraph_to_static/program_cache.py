"""Static programs built from a converted function, one per input signature, and their runs.

A :class:`ConcreteProgram` holds the forward program built for one signature
(the shapes and dtypes of the tensor arguments, the values of the others).
Running it in dygraph mode feeds the inputs and the layers' current parameter
values, returns dygraph variables, and records one tape node whose backward
runs the program's gradient (built on first use) with the output gradients as
seeds: ``loss.backward()`` then fills the parameters' gradients, and a dygraph
optimizer's ``minimize`` trains them.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from oar.dygraph.dygraph_to_static.bridge import BuildContext
from oar.dygraph.varbase import VarBase
from oar.framework.mode import _dygraph_tracer, _set_tracer

_FLOATS = ("float16", "float32", "float64")


def _is_tensor_arg(a: Any) -> bool:
    return isinstance(a, (VarBase, np.ndarray))


def signature(args: tuple, kwargs: dict, instance: Any) -> tuple:
    """The cache key: tensors by shape and dtype, other arguments by value."""

    def one(a: Any) -> Any:
        if isinstance(a, VarBase):
            return ("T", tuple(a.shape), str(a.dtype))
        if isinstance(a, np.ndarray):
            return ("T", a.shape, a.dtype.name)
        if isinstance(a, (list, tuple)):
            return (type(a).__name__, tuple(one(e) for e in a))
        try:
            hash(a)
        except TypeError:
            return ("id", id(a))
        return ("P", type(a).__name__, a)

    return (
        id(instance),
        getattr(instance, "training", None),
        tuple(one(a) for a in args),
        tuple(sorted((k, one(v)) for k, v in kwargs.items())),
    )


class ConcreteProgram:
    """The forward program of one signature, with its inputs, outputs and parameters."""

    def __init__(self, func: Any, args: tuple, kwargs: dict) -> None:
        from oar import fluid
        from oar.executor import Executor
        from oar.places import CPUPlace
        from oar.scope import Scope

        self.main, self.startup = fluid.Program(), fluid.Program()
        self.inputs: list = []  # (argument position or keyword, static variable)
        ctx = BuildContext(self.main)
        old = _set_tracer(None)
        try:
            with fluid.program_guard(self.main, self.startup), ctx.active():
                static_args = [self._input(i, a) for i, a in enumerate(args)]
                kwargs = {k: self._input(k, a) for k, a in kwargs.items()}
                instance = getattr(func, "__self__", None)
                if instance is not None and hasattr(instance, "named_sublayers"):
                    ctx.swap_parameters(instance)
                    for _, sub in instance.named_sublayers():
                        ctx.swap_parameters(sub)
                outs = func(*static_args, **kwargs)
        finally:
            _set_tracer(old)
        self.structure, self.outputs = _flatten(outs)
        self.params = list(ctx.params.values())
        self.arrays = list(ctx.arrays)
        written = {n for b in self.main.blocks for op in b.ops for n in op.output_arg_names}
        # state the forward updates (batch norm's moving mean and variance) goes back to the layer
        self.updated = [(p, var) for p, var in self.params if var.name in written]
        self.exe = Executor(CPUPlace())
        self.scope = Scope()
        self._backward: Any = None

    def _input(self, i: int | str, a: Any) -> Any:
        if not _is_tensor_arg(a):
            return a
        value = a.numpy() if isinstance(a, VarBase) else a
        var = self.main.global_block().create_var(
            name=f"_jst_input_{i}",
            shape=list(value.shape),
            dtype=value.dtype.name,
            is_data=True,
            stop_gradient=value.dtype.name not in _FLOATS,
        )
        self.inputs.append((i, var))
        return var

    def fill_startup(self) -> None:
        """Make the startup program set each parameter to the layer's current value."""
        from oar import fluid

        self.startup = fluid.Program()
        block = self.startup.global_block()
        old = _set_tracer(None)
        try:
            with fluid.program_guard(self.startup, fluid.Program()):
                for p, var in self.params:
                    out = block.create_var(
                        name=var.name, shape=list(var.shape), dtype=var.dtype, persistable=True
                    )
                    fluid.layers.assign(np.asarray(p._value), output=out)
        finally:
            _set_tracer(old)

    # --- running --------------------------------------------------------------------------------
    def _feed(self, args: tuple, kwargs: dict) -> dict:
        for p, var in self.params:
            # the layer's own array, not a copy (state the program updates lands in it)
            self.scope.var(var.name).get_tensor()._array = p._value
        feed = {}
        for i, var in self.inputs:
            a = _arg(args, kwargs, i)
            feed[var.name] = a.numpy() if isinstance(a, VarBase) else np.asarray(a)
        return feed

    def _run(self, program: Any, feed: dict, fetch: list) -> list:
        from oar.lod_tensor import LoDTensorArray

        for name in self.arrays:
            self.scope.var(name).value = LoDTensorArray()
        old = _set_tracer(None)
        try:
            return self.exe.run(program, feed=feed, fetch_list=fetch, scope=self.scope)
        finally:
            _set_tracer(old)

    def __call__(self, args: tuple, kwargs: dict) -> Any:
        feed = self._feed(args, kwargs)
        values = self._run(self.main, feed, [v.name for v in self.outputs])
        for p, var in self.updated:
            p._value = np.array(self.scope.find_var(var.name).get_tensor())
        outs = [VarBase(np.asarray(x)) for x in values]
        tracer = _dygraph_tracer()
        wrt = [(_arg(args, kwargs, i), var) for i, var in self.inputs]
        wrt = [(v, var) for v, var in wrt if isinstance(v, VarBase)]
        wrt = [(v, var) for v, var in wrt if not v.stop_gradient]
        wrt += [(p, var) for p, var in self.params if not p.stop_gradient]
        if tracer is not None and tracer._has_grad and wrt and outs:
            node: Any = _ProgramNode(self, feed, wrt, outs, next(tracer._seq))
            for o, var in zip(outs, self.outputs):
                if str(var.dtype) in _FLOATS:
                    o.stop_gradient = False
                    o._node = node
        return _unflatten(self.structure, iter(outs))

    # --- gradients ------------------------------------------------------------------------------
    def backward_program(self) -> tuple:
        if self._backward is None:
            from oar import fluid

            prog = self.main.clone()
            block = prog.global_block()
            seeds: list = []
            total = None
            old = _set_tracer(None)
            with _Restore(old), fluid.program_guard(prog, fluid.Program()):
                for k, o in enumerate(self.outputs):
                    if str(o.dtype) not in _FLOATS:
                        seeds.append(None)
                        continue
                    seed = block.create_var(
                        name=f"_jst_seed_{k}",
                        shape=None if o.shape is None else list(o.shape),
                        dtype=o.dtype,
                        is_data=True,
                    )
                    seeds.append(seed.name)
                    term = fluid.layers.reduce_sum(
                        fluid.layers.elementwise_mul(block.var(o.name), seed)
                    )
                    total = term if total is None else total + term
                names = [var.name for _, var in self.inputs] + [var.name for _, var in self.params]
                grads = fluid.gradients([total], [block.var(n) for n in names])
            self._backward = (prog, seeds, dict(zip(names, grads)))
        return self._backward


class _Restore:
    """Puts the dygraph tracer back when the block ends."""

    def __init__(self, tracer: Any) -> None:
        self.tracer = tracer

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        _set_tracer(self.tracer)


class _ProgramNode:
    """The tape node of one run: its backward runs the program's gradient."""

    type = "run_program"

    def __init__(self, cp: ConcreteProgram, feed: dict, wrt: list, outs: list, seq: int) -> None:
        self.cp = cp
        self.feed = feed
        self.wrt = [var.name for _, var in wrt]
        self.inputs = {"X": [v for v, _ in wrt]}
        self.outputs = {"Out": [weakref.ref(o) for o in outs]}
        self.out_values = {"Out": [o._value for o in outs]}
        self.attrs: dict = {}
        self.seq = seq

    def run_backward(self, grads: dict) -> None:
        prog, seeds, grad_vars = self.cp.backward_program()
        feed = dict(self.feed)
        for ref, value, seed in zip(self.outputs["Out"], self.out_values["Out"], seeds):
            if seed is None:
                continue
            v = ref()
            entry = grads.get(id(v)) if v is not None else None
            g = entry[1] if entry is not None and entry[1] is not None else None
            feed[seed] = np.zeros_like(value) if g is None else np.asarray(g)
        fetch = [(n, grad_vars[n]) for n in self.wrt if grad_vars.get(n) is not None]
        values = self.cp._run(prog, feed, [g.name for _, g in fetch])
        by_name = dict(zip([n for n, _ in fetch], values))
        for v, name in zip(self.inputs["X"], self.wrt):
            g = by_name.get(name)
            if g is None:
                continue
            entry = grads.get(id(v))
            if entry is None:
                grads[id(v)] = [v, np.asarray(g)]
            else:
                entry[1] = entry[1] + np.asarray(g)


def _arg(args: tuple, kwargs: dict, key: int | str) -> Any:
    return args[key] if isinstance(key, int) else kwargs[key]


def _flatten(outs: Any) -> tuple:
    from oar.framework.variable import Variable

    flat: list = []

    def spec(x: Any) -> Any:
        if isinstance(x, Variable):
            flat.append(x)
            return ("V",)
        if isinstance(x, (list, tuple)):
            return (type(x), [spec(e) for e in x])
        return ("C", x)

    return spec(outs), flat


def _unflatten(structure: Any, it: Any) -> Any:
    if structure[0] == "V":
        return next(it)
    if structure[0] == "C":
        return structure[1]
    kind, items = structure
    return kind(_unflatten(s, it) for s in items)
