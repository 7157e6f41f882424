"""Entering and leaving dygraph mode, data in (``to_variable``) and ``no_grad``.

``guard()`` installs a :class:`Tracer` and, as Fluid does, fresh default
programs and fresh unique-name counters, so a model built twice in two guards
gets the same parameter names (which is what makes checkpoints load back).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

import numpy as np

from oar.dygraph.tracer import Tracer
from oar.dygraph.varbase import VarBase
from oar.errors import at_user_line
from oar.framework import unique_name
from oar.framework.mode import _dygraph_tracer, _set_tracer, in_dygraph_mode
from oar.framework.program import Program, program_guard
from oar.lod_tensor import LoDTensor

__all__ = [
    "guard",
    "to_variable",
    "no_grad",
    "grad",
    "BackwardStrategy",
    "enable_dygraph",
    "disable_dygraph",
    "enabled",
    "in_dygraph_mode",
    "enable_imperative",
    "disable_imperative",
]


def _make_tracer(place: Any) -> Tracer:
    from oar.places import CPUPlace, resolve_device

    place = place if place is not None else CPUPlace()
    device = resolve_device(place)
    return Tracer(place, device.name)


@contextlib.contextmanager
def guard(place: Any = None) -> Iterator[None]:
    """Run ``fluid.layers`` eagerly inside the block, on ``place`` (CPU by default)."""
    tracer = _make_tracer(place)
    with program_guard(Program(), Program()), unique_name.guard():
        old = _set_tracer(tracer)
        try:
            yield
        finally:
            _set_tracer(old)


_enabled_stack: list = []


def enable_dygraph(place: Any = None) -> None:
    """Switch to dygraph mode until :func:`disable_dygraph` (the non-``with`` form of guard)."""
    cm = guard(place)
    cm.__enter__()
    _enabled_stack.append(cm)


def disable_dygraph() -> None:
    """Leave the mode entered by :func:`enable_dygraph` (no-op if not in it)."""
    if _enabled_stack:
        _enabled_stack.pop().__exit__(None, None, None)


enable_imperative = enable_dygraph
disable_imperative = disable_dygraph


def enabled() -> bool:
    return in_dygraph_mode()


def to_variable(value: Any, name: str | None = None, zero_copy: bool | None = None) -> VarBase:
    """An eager variable holding ``value`` (a numpy array, a LoDTensor or an eager variable).

    Data variables have ``stop_gradient=True``, as in Fluid.
    """
    if _dygraph_tracer() is None:
        raise RuntimeError(
            "to_variable: only available in dygraph mode; use it inside "
            "`with fluid.dygraph.guard():`"
        )
    if isinstance(value, VarBase):
        return value
    if isinstance(value, LoDTensor):
        arr = value if value._lod else np.array(value._array)
    elif isinstance(value, np.ndarray):
        if not zero_copy:
            arr = np.array(value)
        else:  # shares the memory; a subclass (e.g. a .numpy() result) runs as a plain view
            arr = value if value.__class__ is np.ndarray else value.view(np.ndarray)
    elif isinstance(value, (list, tuple, int, float, np.number)):
        try:
            arr = np.array(value)
        except ValueError:
            raise TypeError(
                f"to_variable: a list value must be rectangular (nested lists of equal "
                f"lengths), given a ragged {type(value).__name__}{at_user_line()}"
            ) from None
    else:
        raise TypeError(
            f"to_variable: value must be a numpy.ndarray or a LoDTensor, "
            f"given {type(value).__name__}{at_user_line()}"
        )
    if isinstance(arr, np.ndarray) and arr.dtype.name not in (
        "bool",
        "uint8",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "float32",
        "float64",
    ):
        raise TypeError(
            f"to_variable: unsupported dtype {arr.dtype} (use bool, int8-64, uint8 or "
            f"float16/32/64){at_user_line()}"
        )
    tracer = _dygraph_tracer()
    if tracer.device != "cpu":  # the guard's place holds the value (its .numpy() copies back)
        if isinstance(arr, LoDTensor):
            arr = LoDTensor(tracer.to_device(arr._array), arr._lod)
        else:
            arr = tracer.to_device(arr)
    return VarBase(arr, name=name, stop_gradient=True)


class no_grad:
    """Run the block (or the decorated function) without recording a tape."""

    def __new__(cls, func: Any = None):
        if func is None:
            return super().__new__(cls)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with no_grad():
                return func(*args, **kwargs)

        return wrapper

    def __enter__(self) -> None:
        tracer = _dygraph_tracer()
        self._tracer = tracer
        if tracer is not None:
            self._old = tracer._has_grad
            tracer._has_grad = False

    def __exit__(self, *exc: Any) -> None:
        if self._tracer is not None:
            self._tracer._has_grad = self._old

    def __call__(self, func: Any) -> Any:
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with no_grad():
                return func(*args, **kwargs)

        return wrapper


class BackwardStrategy:
    """Fluid 1.7-1.8's backward options. ``sort_sum_gradient`` sums a variable's gradient pieces in
    tape order; oar always does (pieces are added as the reverse sweep meets them), so both settings
    give the same, deterministic result."""

    def __init__(self) -> None:
        self.sort_sum_gradient = False


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool = False,
    no_grad_vars: Any = None,
    backward_strategy: Any = None,
) -> list:
    """Gradients of ``sum(outputs * grad_outputs)`` w.r.t. ``inputs``, returned (not accumulated
    into ``.gradient()``). ``create_graph=True`` (higher-order gradients) is not supported."""
    from oar.dygraph.backward import ones_like, sweep
    from oar.errors import OarError

    tracer = _dygraph_tracer()
    if tracer is None:
        raise RuntimeError("fluid.dygraph.grad: only available in dygraph mode")
    if create_graph:
        raise NotImplementedError(
            "fluid.dygraph.grad: create_graph=True (higher-order gradients) is not "
            "supported by oar's tracer"
        )
    if not only_inputs:
        raise NotImplementedError(
            "fluid.dygraph.grad: only_inputs=False is not supported (as in Fluid 1.8)"
        )
    outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    ins = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if grad_outputs is None:
        grad_outputs = [None] * len(outs)
    elif not isinstance(grad_outputs, (list, tuple)):
        grad_outputs = [grad_outputs]
    if len(grad_outputs) != len(outs):
        raise ValueError(
            f"fluid.dygraph.grad: {len(grad_outputs)} grad_outputs for {len(outs)} outputs"
        )
    roots = []
    for o, g in zip(outs, grad_outputs):
        if o.stop_gradient:
            raise OarError(f"fluid.dygraph.grad: output '{o.name}' has stop_gradient=True")
        seed = (
            ones_like(tracer, o._value)
            if g is None
            else tracer.to_device(
                np.asarray(g.numpy() if isinstance(g, VarBase) else g, dtype=o.dtype)
            )
        )
        roots.append((o, seed))
    blocked = []
    for v in no_grad_vars or ():
        if not v.stop_gradient:
            v.stop_gradient = True
            blocked.append(v)
    try:
        grads = sweep(tracer, roots, retain_graph=bool(retain_graph))
    finally:
        for v in blocked:
            v.stop_gradient = False
    result = []
    for v in ins:
        entry = grads.get(id(v))
        if entry is None or entry[1] is None:
            if not allow_unused:
                raise OarError(
                    f"fluid.dygraph.grad: input '{v.name}' is not reachable from the outputs; "
                    f"pass allow_unused=True to get None for it"
                )
            result.append(None)
            continue
        g = entry[1]
        result.append(
            VarBase(
                tracer.to_device(g.to_dense()) if hasattr(g, "to_dense") else g.copy(),
                stop_gradient=True,
            )
        )
    return result
