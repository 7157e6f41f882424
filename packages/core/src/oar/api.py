"""The declared plugin API: everything a plugin package may import from core.

A plugin (kernels, devices, data, io, distribution) imports from ``oar.api``,
``oar.fluid`` and ``oar.errors`` only; ``tests/core/test_plugin_api.py`` fails
when a package under ``packages/`` (other than core) or ``examples/`` imports
anything else from ``oar``. Core may move its internals freely; a name here
changes only with a deprecation. ``docs/kernel-plugins.md`` says why each name
is here.

Names resolve lazily (PEP 562): ``from oar.api import hookimpl`` imports only
``oar.hookspecs``, so a plugin's ``plugin.py`` that is loaded while ``import
oar`` is still running pulls in nothing heavy, and a kernel module that is
registered lazily does not import the executor.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> the core module that defines it (the single source of this API)
_EXPORTS: dict[str, str] = {
    # plugin machinery
    "hookimpl": "oar.hookspecs",
    "PROJECT": "oar.hookspecs",
    "ENTRY_POINT_GROUP": "oar.plugins",
    "registries": "oar.plugins",
    "Registries": "oar.plugins",
    "register_plugin": "oar.plugins",
    # registries and what they hold
    "OpRegistry": "oar.registry",
    "DeviceRegistry": "oar.registry",
    "KernelRegistry": "oar.registry",
    "NamedRegistry": "oar.registry",
    "Device": "oar.registry",
    "KernelEntry": "oar.kernel_entry",
    # op definitions
    "OpDef": "oar.registry",
    "Attr": "oar.registry",
    "Slot": "oar.registry",
    "VarMeta": "oar.registry",
    "GradSpec": "oar.registry",
    "GradOpDesc": "oar.registry",
    "GradContext": "oar.registry",
    "REQUIRED": "oar.registry",
    "GRAD_SUFFIX": "oar.registry",
    "EMPTY_VAR": "oar.kernel_entry",
    # writing kernels (array-generic kernel modules)
    "kernel": "oar.kernel_family",
    "array_module": "oar.kernel_family",
    "KernelSpec": "oar.kernel_family",
    "family_kernels": "oar.kernel_family",
    "register_family": "oar.kernel_family",
    "register_families": "oar.kernel_family",
    # values kernels and readers exchange
    "LoDTensor": "oar.lod_tensor",
    "SelectedRows": "oar.lod_tensor",
    "create_lod_tensor": "oar.lod_tensor",
    "lengths_to_offsets": "oar.lod_tensor",
    "offsets_to_lengths": "oar.lod_tensor",
    # dtypes
    "convert_dtype": "oar.framework.dtypes",
    "is_float": "oar.framework.dtypes",
    "VarType": "oar.framework.dtypes",
    # shape and geometry rules shared by an op's definition and its kernels
    "split_sizes": "oar.ops.manip",
    "squeeze_shape": "oar.ops.manip",
    "unsqueeze_shape": "oar.ops.manip",
    "resolve_shape": "oar.ops.reshape",
    "reduced_dims": "oar.ops.reduce",
    "alpha_shape": "oar.ops.prelu",
    "slice_bounds": "oar.ops.indexing",
    "strided_bounds": "oar.ops.indexing",
    "resolve_paddings": "oar.ops.conv",
    "pool_geometry": "oar.ops.pool",
    "conv3d_geometry": "oar.ops.conv3d",
    "conv3d_transpose_geometry": "oar.ops.conv3d",
    "pool3d_geometry": "oar.ops.pool3d",
    "py_func_callable": "oar.ops.py_func",
    "channel_axis": "oar.ops.norm",
    "expand_aspect_ratios": "oar.ops.detection_boxes",
    # the IR (static programs)
    "Program": "oar.framework.program",
    "Block": "oar.framework.block",
    "Operator": "oar.framework.operator",
    "OpRole": "oar.framework.operator",
    "Variable": "oar.framework.variable",
    "Parameter": "oar.framework.variable",
    "ProgramBuilder": "oar.framework.construct",
    "LayerHelper": "oar.layer_helper",
    "build_program": "oar.framework.construct",
    "program_from_dict": "oar.framework.construct",
    "default_main_program": "oar.framework.program",
    "default_startup_program": "oar.framework.program",
    "prune_to_targets": "oar.framework.pruning",
    "in_dygraph_mode": "oar.framework.mode",
    # running
    "Executor": "oar.executor.executor",
    "Scope": "oar.scope",
    "global_scope": "oar.scope",
    "merge_feeds": "oar.executor.compiler",
    "cpu_places": "oar.places",
    "cuda_places": "oar.places",
    "CompiledProgram": "oar.executor.compiler",
    "BuildStrategy": "oar.executor.compiler",
    "ExecutionStrategy": "oar.executor.compiler",
    "CPUPlace": "oar.places",
    "CUDAPlace": "oar.places",
    "user_array": "oar.user_array",
    "maybe_progress": "oar.viz.progress_bar",
    # fusing chains of ops in a plan
    "FusionRegistry": "oar.fusion",
    "Fusion": "oar.fusion",
    "shape_stand_in": "oar.executor.stepgen",
    # CPU math threads (BLAS, compiled kernels)
    "cpu_math_library_num_threads": "oar.cpu_threads",
    "set_cpu_math_library_num_threads": "oar.cpu_threads",
    "limit_cpu_math_threads": "oar.cpu_threads",
    "parallel_for": "oar.cpu_pool",
    "parallel_threads": "oar.cpu_pool",
    "scratch": "oar.scratch",
    "release_scratch": "oar.scratch",
    "scratch_bytes": "oar.scratch",
    "with_one_blas_thread": "oar.cpu_threads",
    "with_blas_threads": "oar.cpu_threads",
    "cpu_deterministic": "oar.cpu_threads",
    # dygraph
    "to_variable": "oar.dygraph",
    "Layer": "oar.dygraph.layers",
    "with_user_line": "oar.layers._user_line",
}

# names whose core spelling differs from the public one
_RENAMED: dict[str, str] = {"register_plugin": "register"}

# spelled out (not derived from _EXPORTS) so linters and type checkers see the public names
__all__ = [
    "Attr",
    "Block",
    "BuildStrategy",
    "CPUPlace",
    "CUDAPlace",
    "CompiledProgram",
    "Device",
    "DeviceRegistry",
    "EMPTY_VAR",
    "ENTRY_POINT_GROUP",
    "ExecutionStrategy",
    "Executor",
    "Fusion",
    "FusionRegistry",
    "GRAD_SUFFIX",
    "GradContext",
    "GradOpDesc",
    "GradSpec",
    "KernelEntry",
    "KernelRegistry",
    "KernelSpec",
    "Layer",
    "LoDTensor",
    "NamedRegistry",
    "OpDef",
    "OpRegistry",
    "OpRole",
    "Operator",
    "PROJECT",
    "Parameter",
    "Program",
    "ProgramBuilder",
    "LayerHelper",
    "REQUIRED",
    "Registries",
    "Scope",
    "SelectedRows",
    "Slot",
    "VarMeta",
    "VarType",
    "Variable",
    "alpha_shape",
    "array_module",
    "build_program",
    "channel_axis",
    "conv3d_geometry",
    "conv3d_transpose_geometry",
    "convert_dtype",
    "cpu_deterministic",
    "cpu_math_library_num_threads",
    "cpu_places",
    "create_lod_tensor",
    "cuda_places",
    "default_main_program",
    "default_startup_program",
    "expand_aspect_ratios",
    "family_kernels",
    "global_scope",
    "hookimpl",
    "in_dygraph_mode",
    "is_float",
    "kernel",
    "lengths_to_offsets",
    "limit_cpu_math_threads",
    "merge_feeds",
    "offsets_to_lengths",
    "parallel_for",
    "parallel_threads",
    "pool3d_geometry",
    "pool_geometry",
    "py_func_callable",
    "program_from_dict",
    "prune_to_targets",
    "reduced_dims",
    "register_families",
    "register_family",
    "register_plugin",
    "registries",
    "release_scratch",
    "resolve_paddings",
    "resolve_shape",
    "scratch",
    "scratch_bytes",
    "set_cpu_math_library_num_threads",
    "shape_stand_in",
    "slice_bounds",
    "split_sizes",
    "squeeze_shape",
    "strided_bounds",
    "to_variable",
    "unsqueeze_shape",
    "user_array",
    "maybe_progress",
    "with_blas_threads",
    "with_one_blas_thread",
    "with_user_line",
]


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(
            f"oar.api has no name {name!r}: it is not part of the plugin API "
            f"(see docs/kernel-plugins.md for what is)"
        ) from None
    value = getattr(importlib.import_module(module), _RENAMED.get(name, name))
    globals()[name] = value  # resolved once; later lookups are plain module attributes
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # the same names, for type checkers (runtime resolves them lazily)
    from oar.cpu_pool import parallel_for, parallel_threads
    from oar.cpu_threads import (
        cpu_deterministic,
        cpu_math_library_num_threads,
        limit_cpu_math_threads,
        set_cpu_math_library_num_threads,
        with_blas_threads,
        with_one_blas_thread,
    )
    from oar.dygraph import to_variable
    from oar.dygraph.layers import Layer
    from oar.executor.compiler import (
        BuildStrategy,
        CompiledProgram,
        ExecutionStrategy,
        merge_feeds,
    )
    from oar.executor.executor import Executor
    from oar.executor.stepgen import shape_stand_in
    from oar.framework.block import Block
    from oar.framework.construct import ProgramBuilder, build_program, program_from_dict
    from oar.framework.dtypes import VarType, convert_dtype, is_float
    from oar.framework.mode import in_dygraph_mode
    from oar.framework.operator import Operator, OpRole
    from oar.framework.program import Program, default_main_program, default_startup_program
    from oar.framework.pruning import prune_to_targets
    from oar.framework.variable import Parameter, Variable
    from oar.fusion import Fusion, FusionRegistry
    from oar.hookspecs import PROJECT, hookimpl
    from oar.kernel_entry import EMPTY_VAR, KernelEntry
    from oar.kernel_family import (
        KernelSpec,
        array_module,
        family_kernels,
        kernel,
        register_families,
        register_family,
    )
    from oar.layer_helper import LayerHelper
    from oar.layers._user_line import with_user_line
    from oar.lod_tensor import (
        LoDTensor,
        SelectedRows,
        create_lod_tensor,
        lengths_to_offsets,
        offsets_to_lengths,
    )
    from oar.ops.conv import resolve_paddings
    from oar.ops.conv3d import conv3d_geometry, conv3d_transpose_geometry
    from oar.ops.detection_boxes import expand_aspect_ratios
    from oar.ops.indexing import slice_bounds, strided_bounds
    from oar.ops.manip import split_sizes, squeeze_shape, unsqueeze_shape
    from oar.ops.norm import channel_axis
    from oar.ops.pool import pool_geometry
    from oar.ops.pool3d import pool3d_geometry
    from oar.ops.prelu import alpha_shape
    from oar.ops.py_func import py_func_callable
    from oar.ops.reduce import reduced_dims
    from oar.ops.reshape import resolve_shape
    from oar.places import CPUPlace, CUDAPlace, cpu_places, cuda_places
    from oar.plugins import ENTRY_POINT_GROUP, Registries, registries
    from oar.plugins import register as register_plugin
    from oar.registry import (
        GRAD_SUFFIX,
        REQUIRED,
        Attr,
        Device,
        DeviceRegistry,
        GradContext,
        GradOpDesc,
        GradSpec,
        KernelRegistry,
        NamedRegistry,
        OpDef,
        OpRegistry,
        Slot,
        VarMeta,
    )
    from oar.scope import Scope, global_scope
    from oar.scratch import release_scratch, scratch, scratch_bytes
    from oar.user_array import user_array
    from oar.viz.progress_bar import maybe_progress
