"""``fluid.core``: the names Fluid exposed from its C++ core."""

from __future__ import annotations

from oar._facade import module_getattr
from oar.errors import EOFException
from oar.framework.dtypes import VarType
from oar.lod_tensor import LoDTensor, SelectedRows
from oar.places import CPUPlace, CUDAPinnedPlace, CUDAPlace, is_compiled_with_cuda
from oar.scope import Scope
from oar.scope import ScopeVariable as Variable


class VarDesc:
    VarType = VarType


def get_cuda_device_count() -> int:
    from oar.plugins import registries

    dev = registries().devices.get("cuda")
    return dev.count() if dev is not None and dev.available() else 0


# AnalysisConfig, create_paddle_predictor, PaddleTensor... come from oar-deploy
__getattr__ = module_getattr("core.")

__all__ = [
    "EOFException",
    "VarDesc",
    "LoDTensor",
    "SelectedRows",
    "CPUPlace",
    "CUDAPlace",
    "CUDAPinnedPlace",
    "Scope",
    "Variable",
    "is_compiled_with_cuda",
    "get_cuda_device_count",
]
