"""The public way for another device plugin to reuse these kernels (DESIGN.md allows it).

A CUDA plugin registers every array-generic kernel for its device with cupy
bound, then overrides only its fast paths at a higher priority::

    @hookimpl
    def oar_register_kernels(registry):
        register_generic_kernels(registry, "cuda")     # xp = the cuda Device's array module
        registry.register_kernel("conv2d", "cuda", FLOATS, cudnn_conv2d, priority=10)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oar.api import family_kernels, register_families

from oar_kernels_cpu.kernels import kernel_modules

PACKAGE = "oar_kernels_cpu.kernels"


def register_generic_kernels(
    registry: Any,
    device: str,
    xp: Any | Callable[[], Any] = None,
    *,
    priority: int = 0,
    lazy: bool = True,
) -> None:
    """Register this package's kernels for ``device`` with array module ``xp``.

    ``xp``: the module (numpy, cupy, ...), a zero-argument function returning
    it, or None (default): the array module of the registered ``device``
    (``Device.xp``); resolved when the first kernel family loads. Numpy-only kernels
    (``generic=False``) are registered only when ``xp`` is numpy. ``lazy``: each
    op family's kernel module is imported (and instantiated for ``xp``) the
    first time one of its kernels is looked up.
    """
    register_families(registry, PACKAGE, kernel_modules(), device, xp, priority, lazy)


def register_numpy_only_kernels(
    registry: Any,
    device: str,
    wrap: Callable[[Callable], Callable],
    *,
    priority: int = -10,
    lazy: bool = True,
) -> None:
    """Register this package's numpy-only kernels (``generic=False``) for ``device``, each
    wrapped by ``wrap(kernel)``: e.g. a wrapper that copies device arrays to the host and back,
    so a device plugin covers every op. ``inplace`` is dropped (host copies are never donated).
    """

    def load(family: str) -> None:
        for spec in family_kernels(f"{PACKAGE}.{family}"):
            if spec.generic:
                continue
            flags = {k: v for k, v in spec.flags.items() if k != "inplace"}
            registry.register_kernel(
                spec.op_type,
                device,
                spec.dtypes,
                wrap(spec.fn),
                priority=priority,
                generic=False,
                **flags,
            )

    if lazy and hasattr(registry, "register_lazy"):
        registry.register_lazy(tuple(kernel_modules()), load)
    else:
        for family in kernel_modules():
            load(family)


__all__ = ["register_generic_kernels", "register_numpy_only_kernels"]
