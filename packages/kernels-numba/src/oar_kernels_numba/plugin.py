"""Hook implementations: numba kernels for the cpu device, one op family at a time, lazily.

At ``import oar`` this only checks (from package metadata) that numba can run
here; a missing or unsupported numba raises :class:`PluginUnavailableError`, so
``oar plugins`` lists the plugin as unavailable and the numpy kernels stay.
numba is imported, and a family's kernels registered, the first time a program
looks up a kernel of that family.
"""

from __future__ import annotations

import importlib

from oar.api import hookimpl
from oar.errors import PluginUnavailableError

from oar_kernels_numba.compat import load_numba, unavailable_reason

DEVICE = "cpu"
PRIORITY = 50  # above oar-kernels-cpu (0), below third-party overrides (the docs use 100, 1000)

# op family (a module of oar.ops) -> the module of this package that covers it
FAMILIES = {
    "optimizer": "oar_kernels_numba.optimizer",
    "optimizer_updates": "oar_kernels_numba.optimizer",
    "activation": "oar_kernels_numba.activation",
    "sequence_pool": "oar_kernels_numba.sequence_pool",
    "embedding": "oar_kernels_numba.embedding",
    "norm": "oar_kernels_numba.norm",
    "softmax": "oar_kernels_numba.softmax",
    "losses": "oar_kernels_numba.softmax",
    "dropout": "oar_kernels_numba.dropout",
    "pool": "oar_kernels_numba.pool",
    "conv": "oar_kernels_numba.conv",
}


@hookimpl
def oar_register_kernels(registry) -> None:
    why = unavailable_reason()
    if why is not None:
        raise PluginUnavailableError(why)

    def load(family: str) -> None:
        if load_numba() is None:  # logged once; the overridden kernels stay
            return
        module = importlib.import_module(FAMILIES[family])
        module.register(registry, family, DEVICE, PRIORITY)

    registry.register_lazy(sorted(FAMILIES), load)


@hookimpl
def oar_register_fusions(registry) -> None:
    from oar_kernels_numba import fusions  # no numba import here: the loops load on first use

    fusions.register(registry, DEVICE, PRIORITY)
