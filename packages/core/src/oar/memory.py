"""``fluid.memory_optimize`` / ``release_memory``: accepted, and documented as unnecessary.

oar's executor already frees every temporary right after its last use (see
``Plan.free_after``), which is what these Fluid transpilers arranged by hand.
They validate their arguments and leave the program unchanged.
"""

from __future__ import annotations

from typing import Any

from oar.framework.program import Program


def memory_optimize(
    input_program: Program,
    skip_opt_set: Any = None,
    print_log: bool = False,
    level: int = 0,
    skip_grads: bool = True,
) -> None:
    if not isinstance(input_program, Program):
        raise TypeError(
            f"memory_optimize: input_program must be a Program, given {type(input_program).__name__}"
        )
    if level not in (0, 1):
        raise ValueError(f"memory_optimize: level must be 0 or 1, given {level}")


def release_memory(input_program: Program, skip_opt_set: Any = None) -> None:
    if not isinstance(input_program, Program):
        raise TypeError(
            f"release_memory: input_program must be a Program, given {type(input_program).__name__}"
        )
