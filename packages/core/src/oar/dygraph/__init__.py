"""``fluid.dygraph``: imperative mode on the same op definitions and kernels as static graphs.

Module map: ``tracer`` (runs kernels, records the tape), ``backward`` (replays
grad makers), ``varbase`` (eager variables), ``eager_block`` (initializers and
optimizer ops run eagerly), ``base`` (guard, to_variable, no_grad), ``layers``
(Layer), ``nn`` / ``container`` (layers with parameters),
``learning_rate_scheduler``, ``optimizer`` (dygraph minimize and state),
``math_ops`` / ``indexing`` (operators on eager variables), ``jit`` (TracedLayer,
``declarative``), ``dygraph_to_static`` (ProgramTranslator: Python control flow to programs),
``static_runner`` (StaticModelRunner: a saved inference model as a trainable Layer; reachable
as ``fluid.dygraph.StaticModelRunner`` but, as in Fluid 1.8.5, not in ``__all__``).
``save_dygraph`` / ``load_dygraph`` come from the oar-io plugin.
"""

from __future__ import annotations

import sys

from oar._facade import module_dir, module_getattr
from oar.dygraph import (
    base,
    container,
    dygraph_to_static,
    jit,
    layers,
    learning_rate_scheduler,
    nn,
    static_runner,
)
from oar.dygraph.base import (
    BackwardStrategy,
    disable_dygraph,
    disable_imperative,
    enable_dygraph,
    enable_imperative,
    enabled,
    grad,
    guard,
    in_dygraph_mode,
    no_grad,
    to_variable,
)
from oar.dygraph.container import LayerList, ParameterList, Sequential
from oar.dygraph.dygraph_to_static import (
    ProgramTranslator,
    declarative,
    dygraph_to_static_func,
)
from oar.dygraph.jit import TracedLayer
from oar.dygraph.layers import Layer
from oar.dygraph.learning_rate_scheduler import (
    CosineDecay,
    ExponentialDecay,
    InverseTimeDecay,
    LearningRateDecay,
    LinearLrWarmup,
    NaturalExpDecay,
    NoamDecay,
    PiecewiseDecay,
    PolynomialDecay,
    ReduceLROnPlateau,
)
from oar.dygraph.lr_epoch import LambdaDecay, MultiStepDecay, StepDecay
from oar.dygraph.nn import (
    BatchNorm,
    Conv2D,
    Conv2DTranspose,
    Dropout,
    Embedding,
    GRUUnit,
    LayerNorm,
    Linear,
    Pool2D,
    PRelu,
)
from oar.dygraph.nn_loss import NCE, BCELoss, L1Loss, MSELoss, NLLLoss
from oar.dygraph.nn_static_only import RowConv, SequenceConv
from oar.dygraph.nn_vision import (
    BilinearTensorProduct,
    Conv3D,
    Conv3DTranspose,
    GroupNorm,
    InstanceNorm,
    SpectralNorm,
    TreeConv,
)
from oar.dygraph.static_runner import StaticModelRunner  # noqa: F401 - not in Fluid's __all__
from oar.dygraph.tracer import Tracer
from oar.dygraph.varbase import ParamBase, VarBase

# as in Fluid 1.8.5, the static-only layers live in `fluid.dygraph.nn` only
nn.RowConv, nn.SequenceConv = RowConv, SequenceConv
del RowConv, SequenceConv

# `import oar.fluid.dygraph.nn` and friends resolve to these modules
for _name, _mod in {
    "": sys.modules[__name__],
    ".nn": nn,
    ".base": base,
    ".layers": layers,
    ".container": container,
    ".learning_rate_scheduler": learning_rate_scheduler,
    ".jit": jit,
    ".dygraph_to_static": dygraph_to_static,
    ".static_runner": static_runner,
}.items():
    sys.modules[f"oar.fluid.dygraph{_name}"] = _mod

__getattr__ = module_getattr("dygraph.")
__dir__ = module_dir("dygraph.", __name__)

__all__ = [
    "guard",
    "to_variable",
    "no_grad",
    "grad",
    "BackwardStrategy",
    "enable_dygraph",
    "disable_dygraph",
    "enabled",
    "in_dygraph_mode",
    "enable_imperative",
    "disable_imperative",
    "Layer",
    "Sequential",
    "LayerList",
    "ParameterList",
    "Linear",
    "Conv2D",
    "Conv2DTranspose",
    "Pool2D",
    "BatchNorm",
    "LayerNorm",
    "Embedding",
    "Dropout",
    "GRUUnit",
    "PRelu",
    "LearningRateDecay",
    "PiecewiseDecay",
    "NaturalExpDecay",
    "ExponentialDecay",
    "InverseTimeDecay",
    "PolynomialDecay",
    "CosineDecay",
    "NoamDecay",
    "LinearLrWarmup",
    "ReduceLROnPlateau",
    "StepDecay",
    "MultiStepDecay",
    "LambdaDecay",
    "Conv3D",
    "Conv3DTranspose",
    "GroupNorm",
    "InstanceNorm",
    "BilinearTensorProduct",
    "SpectralNorm",
    "TreeConv",
    "BCELoss",
    "L1Loss",
    "MSELoss",
    "NLLLoss",
    "NCE",
    "TracedLayer",
    "ProgramTranslator",
    "declarative",
    "dygraph_to_static_func",
    "Tracer",
    "VarBase",
    "ParamBase",
    "nn",
    "base",
    "layers",
    "container",
    "learning_rate_scheduler",
]

# FLAGS_check_nan_inf: the tracer runs checked methods while the flag is on (oar.nan_inf)
from oar.flags import on_change as _on_change  # noqa: E402
from oar.nan_inf import follow_flag as _follow_flag  # noqa: E402

_on_change("FLAGS_check_nan_inf", _follow_flag)
