"""Which mode layers run in: static graph (default) or dygraph (a tracer is set)."""

from __future__ import annotations

from typing import Any

_tracer: Any = None


def in_dygraph_mode() -> bool:
    """True inside ``fluid.dygraph.guard()`` (or after ``enable_dygraph``)."""
    return _tracer is not None


def _dygraph_tracer() -> Any:
    return _tracer


def _set_tracer(tracer: Any) -> Any:
    """Install ``tracer`` (or None for static mode); returns the previous one."""
    global _tracer
    old, _tracer = _tracer, tracer
    return old
