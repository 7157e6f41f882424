"""Running programs: the Executor, its cached plans, and CompiledProgram."""

from oar.executor.compiler import (
    BuildStrategy,
    CompiledProgram,
    ExecutionStrategy,
    ParallelExecutor,
)
from oar.executor.executor import Executor
from oar.scope import global_scope, scope_guard  # Fluid's fluid.executor has them

__all__ = [
    "Executor",
    "CompiledProgram",
    "BuildStrategy",
    "ExecutionStrategy",
    "ParallelExecutor",
    "global_scope",
    "scope_guard",
]
