"""Hook implementations: the cpu device and every numpy kernel."""

from __future__ import annotations

from oar.hookspecs import hookimpl

from oar_kernels_cpu.device import make_device
from oar_kernels_cpu.kernels import all_kernels

DEVICE = "cpu"
PRIORITY = 0


@hookimpl
def oar_register_devices(registry) -> None:
    registry.register_device(make_device())


@hookimpl
def oar_register_kernels(registry) -> None:
    for spec in all_kernels():
        registry.register_kernel(
            spec.op_type, DEVICE, spec.dtypes, spec.fn, priority=PRIORITY, **spec.flags
        )
