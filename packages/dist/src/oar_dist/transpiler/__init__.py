"""``fluid.transpiler``: DistributeTranspiler and its config (modes pserver, nccl2, collective)."""

from __future__ import annotations

from oar_dist.transpiler.config import DistributeTranspilerConfig
from oar_dist.transpiler.slicing import HashName, PSDispatcher, RoundRobin
from oar_dist.transpiler.transpiler import MODES, DistributeTranspiler, register_mode

__all__ = [
    "MODES",
    "DistributeTranspiler",
    "DistributeTranspilerConfig",
    "HashName",
    "PSDispatcher",
    "RoundRobin",
    "register_mode",
]
