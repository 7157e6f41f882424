"""Hook implementations: the cuda device and a kernel for every op."""

from __future__ import annotations

from oar.api import hookimpl

from oar_kernels_cuda import runtime
from oar_kernels_cuda.device import from_host, make_device, to_host
from oar_kernels_cuda.registration import register_device_kernels

DEVICE = "cuda"


@hookimpl
def oar_register_devices(registry) -> None:
    registry.register_device(make_device())


@hookimpl
def oar_register_kernels(registry) -> None:
    # registration imports nothing of cupy: xp resolves when a cuda kernel is first looked up
    register_device_kernels(
        registry, DEVICE, to_host, from_host, xp=runtime.array_module, fused=True
    )
