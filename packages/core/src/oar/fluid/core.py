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

# Fluid's C++ exception type: oar's own errors play its part
from oar.errors import OarError as EnforceNotMet  # noqa: E402
from oar.places import Place  # noqa: E402


def __getattr__(name: str):
    if name == "VarBase":  # dygraph's eager variable (imported late: dygraph imports core)
        from oar.dygraph.varbase import VarBase

        return VarBase
    # AnalysisConfig, create_paddle_predictor, PaddleTensor... come from oar-deploy
    from oar._facade import module_getattr

    return module_getattr("core.")(name)


def __dir__() -> list:
    from oar._facade import module_dir

    return module_dir("core.", __name__, ("VarBase",))()


class _Globals:
    """``fluid.core.globals()``: the flags, read and written by name (``FLAGS_...``)."""

    def __getitem__(self, name: str):
        from oar.flags import get_flags

        return get_flags([name])[name]

    def __setitem__(self, name: str, value) -> None:
        from oar.flags import set_flags

        set_flags({name: value})

    def __contains__(self, name: object) -> bool:
        from oar.flags import _values

        return name in _values

    def keys(self) -> list:
        from oar.flags import _values

        return list(_values)

    def get(self, name: str, default=None):
        return self[name] if name in self else default


def globals() -> _Globals:
    return _Globals()


def op_support_gpu(op_type: str) -> bool:
    """Whether an installed plugin registered a CUDA kernel for ``op_type``."""
    from oar.plugins import registries

    return "cuda" in registries().kernels.devices_for(op_type)


__all__ += ["EnforceNotMet", "Place", "globals", "op_support_gpu"]
