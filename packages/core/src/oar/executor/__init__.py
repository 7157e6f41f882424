"""Running programs: the Executor, its cached plans, and CompiledProgram."""

from oar.executor.compiler import (
    BuildStrategy,
    CompiledProgram,
    ExecutionStrategy,
    ParallelExecutor,
)
from oar.executor.executor import Executor

__all__ = ["Executor", "CompiledProgram", "BuildStrategy", "ExecutionStrategy", "ParallelExecutor"]
