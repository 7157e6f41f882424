"""``fluid.compiler``: CompiledProgram and its strategies."""

from oar.executor.compiler import BuildStrategy, CompiledProgram, ExecutionStrategy

__all__ = ["CompiledProgram", "BuildStrategy", "ExecutionStrategy"]
