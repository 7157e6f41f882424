"""``fluid.core``: the names Fluid exposed from its C++ core."""

from __future__ import annotations

from oar.errors import EOFException
from oar.framework.dtypes import VarType
from oar.lod_tensor import LoDTensor, LoDTensorArray, SelectedRows
from oar.places import CPUPlace, CUDAPinnedPlace, CUDAPlace, is_compiled_with_cuda
from oar.scope import Scope
from oar.scope import ScopeVariable as Variable


class VarDesc:
    VarType = VarType


def get_cuda_device_count() -> int:
    from oar.plugins import registries

    dev = registries().devices.get("cuda")
    return dev.count() if dev is not None and dev.available() else 0


__all__ = [
    "EOFException",
    "VarDesc",
    "LoDTensor",
    "LoDTensorArray",
    "SelectedRows",
    "CPUPlace",
    "CUDAPlace",
    "CUDAPinnedPlace",
    "Scope",
    "Variable",
    "is_compiled_with_cuda",
    "get_cuda_device_count",
]
