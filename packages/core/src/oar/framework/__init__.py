"""The program IR: Variable, Parameter, Operator, Block, Program, and their helpers."""

# Fluid 1.8's fluid.framework also exposes these
from oar.flags import get_flags, set_flags
from oar.framework import builder as _builder  # noqa: F401 - installs the static builder
from oar.framework.block import Block
from oar.framework.mode import in_dygraph_mode
from oar.framework.operator import Operator, OpRole
from oar.framework.platform import (
    cuda_pinned_places,
    device_guard,
    load_op_library,
    require_version,
)
from oar.framework.program import (
    Program,
    default_main_program,
    default_startup_program,
    name_scope,
    program_guard,
    switch_main_program,
    switch_startup_program,
)
from oar.framework.variable import Parameter, Variable
from oar.places import cpu_places, cuda_places, is_compiled_with_cuda

__all__ = [
    "Block",
    "Operator",
    "OpRole",
    "Program",
    "Parameter",
    "Variable",
    "default_main_program",
    "default_startup_program",
    "program_guard",
    "name_scope",
    "in_dygraph_mode",
    "switch_main_program",
    "switch_startup_program",
    "cpu_places",
    "cuda_places",
    "cuda_pinned_places",
    "is_compiled_with_cuda",
    "device_guard",
    "load_op_library",
    "require_version",
    "get_flags",
    "set_flags",
]
