"""Array-generic kernel modules, instantiated once per device (the Chainer / Thinc pattern).

A kernel module written against ``xp`` instead of ``numpy`` is a template for
every device whose array module behaves like numpy (numpy, cupy)::

    from oar.kernel_family import array_module, kernel

    xp = array_module(__name__)        # numpy when imported; the device's module when instantiated

    @kernel("relu", ("float32", "float64"))
    def relu(inputs, attrs):
        return {"Out": xp.maximum(inputs["X"], 0)}

:func:`family_kernels` runs the module's code once for an array module (``xp``
is then a plain module global, so a kernel pays nothing per call to find it)
and returns the kernels it declared; :func:`register_family` registers them
for a device, and :func:`register_families` defers that to the first lookup
of one of the family's ops (import time). A kernel that is not array-generic
(it needs a numpy-only API) says so with ``@kernel(..., generic=False)``: it is
registered only where ``xp`` is numpy, and ``oar plugins`` lists it.
"""

from __future__ import annotations

import builtins
import importlib
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

KERNEL_FLAGS = frozenset({"lod", "selected_rows", "wants_outputs", "inplace", "no_need_buffer"})


@attrs.frozen
class KernelSpec:
    """A kernel a module declared: op type, dtypes (``None`` = any), function and call flags."""

    op_type: str
    dtypes: tuple | None
    fn: Callable
    flags: dict
    generic: bool = True


_declared: dict[str, list] = {}  # module (instance) name -> its KernelSpecs
_binding: dict[str, Any] = {}  # instance name -> xp, while that instance's code runs
_instances: dict[tuple, list] = {}  # (module, instance tag) -> KernelSpecs
_lock = threading.RLock()


def kernel(
    op_type: str, dtypes: Sequence[str] | None = None, *, generic: bool = True, **flags: Any
) -> Callable:
    """Declare the decorated function as the kernel of ``op_type`` for ``dtypes`` (None = any).

    ``flags`` are ``register_kernel``'s (``lod``, ``selected_rows``,
    ``wants_outputs``, ``inplace``, ``no_need_buffer``). ``generic=False``: the
    kernel uses numpy-only APIs and is registered only for numpy devices.
    """
    unknown = set(flags) - KERNEL_FLAGS
    if unknown:
        raise TypeError(
            f"@kernel({op_type!r}): unknown flags {sorted(unknown)}; known: {sorted(KERNEL_FLAGS)}"
        )
    spec_dtypes = tuple(dtypes) if dtypes else None

    def deco(fn: Callable) -> Callable:
        spec = KernelSpec(op_type, spec_dtypes, fn, dict(flags), generic)
        _declared.setdefault(fn.__module__, []).append(spec)
        return fn

    return deco


def array_module(module_name: str) -> Any:
    """The array module a kernel module's code is running for: numpy for a plain import, the
    device's module while :func:`family_kernels` instantiates it. Call once, at module level."""
    xp = _binding.get(module_name)
    if xp is None:
        import numpy

        return numpy
    return xp


def _is_numpy(xp: Any) -> bool:
    return getattr(xp, "__name__", None) == "numpy" and type(xp).__name__ == "module"


def family_kernels(module_name: str, xp: Any = None, tag: str | None = None) -> list:
    """The kernels ``module_name`` declares, with ``xp`` bound to the array module ``xp``.

    ``xp`` None or numpy: the module as imported. Otherwise its code runs once
    more (cached per ``tag``, default the array module's name) in a fresh
    namespace whose ``array_module(__name__)`` is ``xp``; the module's
    functions, tables and helpers then all use ``xp``.
    """
    if xp is None or _is_numpy(xp):
        importlib.import_module(module_name)
        return list(_declared.get(module_name, ()))
    tag = tag or getattr(xp, "__name__", type(xp).__name__)
    key = (module_name, tag)
    with _lock:
        specs = _instances.get(key)
        if specs is None:
            specs = _instances[key] = _instantiate(module_name, xp, tag)
    return list(specs)


def _instantiate(module_name: str, xp: Any, tag: str) -> list:
    module = importlib.import_module(module_name)
    code = module.__spec__.loader.get_code(module_name)
    name = f"{module_name}[{tag}]"
    namespace = {
        "__name__": name,
        "__package__": module.__package__,
        "__file__": module.__file__,
        "__builtins__": builtins,
    }
    _binding[name] = xp
    try:
        exec(code, namespace)
    finally:
        del _binding[name]
    return _declared.pop(name, [])


def register_family(
    registry: Any,
    module_name: str,
    device: str,
    xp: Any = None,
    priority: int = 0,
    tag: str | None = None,
) -> int:
    """Register ``module_name``'s kernels for ``device`` with ``xp`` bound; returns how many.

    Numpy-only kernels (``generic=False``) are registered only when ``xp`` is numpy.
    """
    numpy_device = xp is None or _is_numpy(xp)
    count = 0
    for spec in family_kernels(module_name, xp, tag):
        if not spec.generic and not numpy_device:
            continue
        registry.register_kernel(
            spec.op_type,
            device,
            spec.dtypes,
            spec.fn,
            priority=priority,
            generic=spec.generic,
            **spec.flags,
        )
        count += 1
    return count


def register_families(
    registry: Any,
    package: str,
    families: Iterable[str],
    device: str,
    xp: Any | Callable[[], Any] = None,
    priority: int = 0,
    lazy: bool = True,
) -> None:
    """Register the kernel modules ``package.<family>`` for ``device``.

    ``xp`` is the array module, a zero-argument function returning it, or
    ``None``: the array module of the device registered as ``device``
    (``Device.xp``). It is resolved when the first family loads, so e.g. cupy
    is imported only then. ``lazy``: each family is registered the first time
    a kernel of one of its ops (the ops that ``oar.ops.<family>`` defines) is
    looked up.
    """
    state: dict = {}

    def resolve() -> Any:
        if "xp" not in state:
            state["xp"] = _device_xp(device) if xp is None else xp() if callable(xp) else xp
        return state["xp"]

    def load(family: str) -> None:
        register_family(registry, f"{package}.{family}", device, resolve(), priority, device)

    if lazy and hasattr(registry, "register_lazy"):
        registry.register_lazy(tuple(families), load)
    else:
        for family in families:
            load(family)


def _device_xp(device: str) -> Any:
    from oar.errors import RegistryError
    from oar.plugins import registries

    dev = registries().devices.get(device)
    if dev is None:
        raise RegistryError(
            f"kernels for device '{device}': no plugin registered that device, so its array "
            f"module is unknown; register the device (oar_register_devices) or pass xp"
        )
    return dev.xp


__all__ = [
    "KernelSpec",
    "array_module",
    "family_kernels",
    "kernel",
    "register_families",
    "register_family",
]
