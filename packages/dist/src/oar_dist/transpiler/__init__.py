"""``fluid.transpiler``: DistributeTranspiler and its config (modes pserver, nccl2, collective)."""

from __future__ import annotations

from oar_dist.transpiler.config import DistributeTranspilerConfig
from oar_dist.transpiler.slicing import HashName, PSDispatcher, RoundRobin
from oar_dist.transpiler.transpiler import MODES, DistributeTranspiler, register_mode


def __getattr__(name: str):
    """``fluid.transpiler.memory_optimize`` / ``release_memory``: the same functions as
    ``fluid.memory_optimize`` / ``fluid.release_memory`` (as in Fluid 1.8)."""
    if name in ("memory_optimize", "release_memory"):
        from oar import fluid

        return getattr(fluid, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "MODES",
    "DistributeTranspiler",
    "DistributeTranspilerConfig",
    "HashName",
    "PSDispatcher",
    "RoundRobin",
    "memory_optimize",
    "register_mode",
    "release_memory",
]
