"""``from oar import fluid``: the Fluid 1.5-1.8 public surface.

Core names are imported here; names that plugins provide (``fluid.io.PyReader``,
``fluid.DataFeeder``, ``fluid.DistributeTranspiler``...) are looked up through
the ``oar_fluid_api`` hook on first use, with a clear error naming the
distribution to install when it is missing.
"""

from __future__ import annotations

import sys

from oar import (
    backward,
    clip,
    initializer,
    layer_helper,
    layers,
    metrics,
    optimizer,
    profiler,
    regularizer,
)
from oar import framework as framework
from oar._facade import forward_getattr, module_dir, module_getattr
from oar.backward import append_backward, gradients
from oar.executor import (
    BuildStrategy,
    CompiledProgram,
    ExecutionStrategy,
    Executor,
    ParallelExecutor,
)
from oar.flags import get_flags, set_flags
from oar.fluid import (
    average,
    compiler,
    contrib,
    core,
    data_feeder,
    debugger,
    evaluator,
    install_check,
    io,
    lod_tensor,
)
from oar.framework import unique_name
from oar.framework.mode import in_dygraph_mode
from oar.framework.param_attr import ParamAttr, WeightNormParamAttr
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
)
from oar.framework.variable import Parameter, Variable
from oar.layers.io import fluid_data as data
from oar.lod_tensor import (
    LoDTensor,
    LoDTensorArray,
    Tensor,
    create_lod_tensor,
    create_random_int_lodtensor,
)
from oar.memory import memory_optimize, release_memory
from oar.places import (
    CPUPlace,
    CUDAPinnedPlace,
    CUDAPlace,
    cpu_places,
    cuda_places,
    is_compiled_with_cuda,
)
from oar.scope import Scope, global_scope, scope_guard

param_attr = sys.modules["oar.framework.param_attr"]
executor = sys.modules["oar.executor"]

# `import oar.fluid.layers as layers` and friends resolve to the core modules
for _name, _mod in {
    "layers": layers,
    "metrics": metrics,
    "optimizer": optimizer,
    "initializer": initializer,
    "regularizer": regularizer,
    "clip": clip,
    "backward": backward,
    "unique_name": unique_name,
    "param_attr": param_attr,
    "framework": framework,
    "executor": executor,
    "layer_helper": layer_helper,
    "profiler": profiler,
}.items():
    sys.modules[f"{__name__}.{_name}"] = _mod

__getattr__ = module_getattr("")
__dir__ = module_dir("", __name__)

# core namespaces without a __getattr__ of their own: a missing Fluid name says why
for _prefix, _mod in {
    "layers.": layers,
    "optimizer.": optimizer,
    "initializer.": initializer,
    "regularizer.": regularizer,
    "clip.": clip,
    "framework.": framework,
    "executor.": executor,
    "unique_name.": unique_name,
    "param_attr.": param_attr,
    "backward.": backward,
}.items():
    if "__getattr__" not in vars(_mod):
        setattr(_mod, "__getattr__", module_getattr(_prefix))  # noqa: B010

__all__ = [
    "layers",
    "metrics",
    "optimizer",
    "initializer",
    "regularizer",
    "clip",
    "backward",
    "unique_name",
    "io",
    "core",
    "compiler",
    "debugger",
    "contrib",
    "framework",
    "param_attr",
    "executor",
    "append_backward",
    "gradients",
    "Executor",
    "ParallelExecutor",
    "CompiledProgram",
    "BuildStrategy",
    "ExecutionStrategy",
    "ParamAttr",
    "WeightNormParamAttr",
    "Program",
    "default_main_program",
    "default_startup_program",
    "program_guard",
    "name_scope",
    "Variable",
    "Parameter",
    "LoDTensor",
    "LoDTensorArray",
    "Tensor",
    "create_lod_tensor",
    "create_random_int_lodtensor",
    "CPUPlace",
    "CUDAPlace",
    "CUDAPinnedPlace",
    "cpu_places",
    "cuda_places",
    "is_compiled_with_cuda",
    "Scope",
    "global_scope",
    "scope_guard",
    "in_dygraph_mode",
    "data",
    "memory_optimize",
    "release_memory",
    "set_flags",
    "get_flags",
    "average",
    "evaluator",
    "profiler",
    "data_feeder",
    "install_check",
    "lod_tensor",
    "cuda_pinned_places",
    "device_guard",
    "load_op_library",
    "require_version",
]

# fluid.embedding / fluid.one_hot: the _v2 ops (ids of any shape)
from oar.layers.embedding import embedding_v2 as embedding  # noqa: E402
from oar.layers.embedding import one_hot_v2 as one_hot  # noqa: E402

__all__ += ["embedding", "one_hot"]
# fluid.nets (conv/pool blocks, glu, attention)
from oar import nets  # noqa: E402

sys.modules[f"{__name__}.nets"] = nets
__all__ += ["nets"]

# fluid.dygraph (imperative mode)
from oar import dygraph  # noqa: E402

# Fluid 1.8 re-exports the dygraph layer classes at the top level (fluid.Conv2D, fluid.Linear...)
from oar.dygraph import (  # noqa: E402
    NCE,
    BatchNorm,
    BCELoss,
    BilinearTensorProduct,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Conv3DTranspose,
    Dropout,
    Embedding,
    GroupNorm,
    GRUUnit,
    InstanceNorm,
    L1Loss,
    Layer,
    LayerNorm,
    Linear,
    MSELoss,
    NLLLoss,
    Pool2D,
    PRelu,
    SpectralNorm,
    TreeConv,
    disable_dygraph,
    disable_imperative,
    enable_dygraph,
    enable_imperative,
)

__all__ += [
    "BatchNorm",
    "BCELoss",
    "BilinearTensorProduct",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "Dropout",
    "Embedding",
    "GroupNorm",
    "GRUUnit",
    "InstanceNorm",
    "L1Loss",
    "Layer",
    "LayerNorm",
    "Linear",
    "MSELoss",
    "NLLLoss",
    "NCE",
    "Pool2D",
    "PRelu",
    "SpectralNorm",
    "TreeConv",
]
__all__ += [
    "dygraph",
    "enable_dygraph",
    "disable_dygraph",
    "enable_imperative",
    "disable_imperative",
]

# Fluid module paths that oar has as modules with fewer names: the rest come from the namespace
for _sub in ("io", "tensor", "learning_rate_scheduler"):
    forward_getattr(sys.modules[f"oar.layers.{_sub}"], layers)
for _sub in ("nn", "jit", "learning_rate_scheduler"):
    forward_getattr(sys.modules[f"oar.dygraph.{_sub}"], dygraph)
