"""``fluid.transpiler``: DistributeTranspiler and its config (collective modes here; pserver: issue 13)."""

from __future__ import annotations

from oar_dist.transpiler.config import DistributeTranspilerConfig
from oar_dist.transpiler.transpiler import MODES, DistributeTranspiler, register_mode

__all__ = ["DistributeTranspiler", "DistributeTranspilerConfig", "MODES", "register_mode"]
