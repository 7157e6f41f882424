"""Which mode layers run in: static graph (default) or dygraph (a tracer is set).

The mode is one object, the current :class:`~oar.framework.builder.Builder`:
layers, operators and optimizers hand their ops to :func:`current_builder`
instead of asking which mode they are in.
"""

from __future__ import annotations

from typing import Any

_tracer: Any = None
_static: Any = None  # the StaticBuilder, set when oar.framework.builder is imported
_builder: Any = None


def in_dygraph_mode() -> bool:
    """True inside ``fluid.dygraph.guard()`` (or after ``enable_dygraph``)."""
    return _tracer is not None


def _dygraph_tracer() -> Any:
    return _tracer


def current_builder() -> Any:
    """Where ops go now: the static builder, or the eager builder inside ``dygraph.guard()``."""
    return _builder


def _set_tracer(tracer: Any) -> Any:
    """Install ``tracer`` (or None for static mode) and its eager builder; returns the previous
    tracer."""
    global _tracer, _builder
    old, _tracer = _tracer, tracer
    _builder = _static if tracer is None else tracer.eager_block.builder
    return old


def _set_static_builder(builder: Any) -> None:
    global _static, _builder
    _static = builder
    if _tracer is None:
        _builder = builder
