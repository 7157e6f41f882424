"""Hook implementations: the cpu device and its kernels (registered per family, lazily)."""

from __future__ import annotations

from oar.api import hookimpl

from oar_kernels_cpu._malloc import tune_malloc
from oar_kernels_cpu.device import make_device
from oar_kernels_cpu.generic import register_generic_kernels

DEVICE = "cpu"
PRIORITY = 0


@hookimpl
def oar_register_devices(registry) -> None:
    tune_malloc()  # large arrays stay mapped between steps (see _malloc)
    registry.register_device(make_device())


@hookimpl
def oar_register_kernels(registry) -> None:
    # xp = the cpu device's array module (numpy), bound when a kernel family first loads
    register_generic_kernels(registry, DEVICE, priority=PRIORITY)
