"""oar: a plugin-based reimplementation of the PaddlePaddle Fluid programming model.

``from oar import fluid`` stands in for ``import paddle.fluid as fluid`` and
``import oar`` for ``import paddle``. Kernels, readers, save/load and
distribution come from plugins found through the ``oar`` entry-point group.
"""

from __future__ import annotations

__version__ = "0.1.0"

from oar import hookspecs  # noqa: F401  (leaf module: safe for plugins to import early)
from oar._facade import install_alias_finder, module_dir, module_getattr
from oar.plugins import registries

registries()
install_alias_finder()

from oar.framework.program import (  # noqa: E402
    Program,
    default_main_program,
    default_startup_program,
    program_guard,
)
from oar.lod_tensor import LoDTensor, SelectedRows, create_lod_tensor  # noqa: E402
from oar.places import CPUPlace, CUDAPlace  # noqa: E402
from oar.scope import Scope, global_scope, scope_guard  # noqa: E402

_plugin_getattr = module_getattr("oar.")
# `import paddle` gives paddle.fluid, paddle.compat... without importing them first
_SUBMODULES = ("fluid", "compat", "distributed")
__dir__ = module_dir("oar.", __name__, _SUBMODULES + ("summary",))


def __getattr__(name: str):
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"oar.{name}")
    if name == "summary":  # oar.summary(layer_or_program, input_size): loaded on first use
        from oar.viz.model_summary import summary

        return summary
    return _plugin_getattr(name)


__all__ = [
    "Program",
    "default_main_program",
    "default_startup_program",
    "program_guard",
    "LoDTensor",
    "SelectedRows",
    "create_lod_tensor",
    "CPUPlace",
    "CUDAPlace",
    "Scope",
    "global_scope",
    "scope_guard",
    "__version__",
]
