"""Fluid's platform helpers: ``require_version``, ``device_guard``, ``load_op_library``, ...

``require_version`` compares against the Fluid API level oar implements
(``FLUID_API_VERSION``), since programs name Fluid versions, not oar's.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import importlib.util
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.places import CUDAPinnedPlace, is_compiled_with_cuda

FLUID_API_VERSION = "1.8.5"

_VERSION = re.compile(r"^\d+(\.\d+){0,3}$")
_DEVICE = re.compile(r"^(cpu|gpu(:\d+)?)$")
_current_device: contextvars.ContextVar = contextvars.ContextVar("oar_device_guard", default=None)


def _version_tuple(text: str, what: str) -> tuple:
    if not isinstance(text, str):
        raise ArgumentTypeError(
            "require_version",
            f"the type of '{what}' in require_version must be str, but received {type(text)}",
        )
    if not _VERSION.match(text):
        raise ArgumentError(
            "require_version",
            f"'{what}' must be a version like '1.8' or '1.8.0', got {text!r}",
        )
    return tuple(int(p) for p in (text.split(".") + ["0"] * 4)[:4])


def require_version(min_version: str, max_version: str | None = None) -> None:
    """Raise unless the Fluid API oar implements (1.8.5) is in ``[min_version, max_version]``."""
    have = _version_tuple(FLUID_API_VERSION, "installed")
    low = _version_tuple(min_version, "min_version")
    high = None if max_version is None else _version_tuple(max_version, "max_version")
    if have < low or (high is not None and have > high):
        wanted = (
            f"{min_version} or higher" if high is None else f"in [{min_version}, {max_version}]"
        )
        raise Exception(
            f"VersionError: PaddlePaddle version {wanted} is required, but oar implements the "
            f"Fluid {FLUID_API_VERSION} API"
        )


@contextlib.contextmanager
def device_guard(device: str | None = None) -> Iterator[None]:
    """Ops built inside run on ``device`` ("cpu", "gpu", "gpu:N"); ``current_device()`` reads it.

    Pipeline training uses it to cut a program into stages; on one CPU every
    stage runs on the CPU.
    """
    if device is not None and (not isinstance(device, str) or not _DEVICE.match(device)):
        raise ArgumentError(
            "device_guard",
            f"device must be None, 'cpu', 'gpu' or 'gpu:N', got {device!r}",
        )
    token = _current_device.set(device)
    try:
        yield
    finally:
        _current_device.reset(token)


def current_device() -> str | None:
    """The device named by the innermost ``device_guard`` (None outside one)."""
    return _current_device.get()


def cuda_pinned_places(device_count: int | None = None) -> list:
    """``device_count`` CUDAPinnedPlace objects (default: CPU_NUM, else the CPU count)."""
    if device_count is None:
        device_count = int(os.environ.get("CPU_NUM", os.cpu_count() or 1))
    if not isinstance(device_count, int) or device_count < 1:
        raise ArgumentError(
            "cuda_pinned_places",
            f"device_count must be a positive int, got {device_count!r}",
        )
    if not is_compiled_with_cuda():
        raise ArgumentError(
            "cuda_pinned_places",
            "CUDAPinnedPlace needs the CUDA device (pip install oar-kernels-cuda)",
        )
    return [CUDAPinnedPlace() for _ in range(device_count)]


def load_op_library(lib_filename: str) -> Any:
    """Load custom ops: a Python op plugin module (a ``.py`` file or a module name).

    The module's ``oar_register_ops`` / ``oar_register_kernels`` hook
    implementations are registered at once (docs/kernel-plugins.md). A compiled
    Fluid ``.so`` cannot be loaded: its kernels are C++ against Fluid's internals.
    """
    name = os.fspath(lib_filename)
    if name.endswith((".so", ".dll", ".dylib")) or ".so." in os.path.basename(name):
        raise ArgumentError(
            "load_op_library",
            f"{name!r} is a compiled Fluid op library; oar loads Python op plugins "
            "(a module with oar_register_ops / oar_register_kernels hooks, "
            "see docs/kernel-plugins.md)",
        )
    if name.endswith(".py"):
        if not os.path.isfile(name):
            raise ArgumentError(
                "load_op_library",
                f"no such file: {name!r}",
            )
        modname = "oar_op_library_" + re.sub(
            r"\W", "_", os.path.splitext(os.path.basename(name))[0]
        )
        spec = importlib.util.spec_from_file_location(modname, name)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[modname] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    else:
        module = importlib.import_module(name)
    if not any(hasattr(module, h) for h in ("oar_register_ops", "oar_register_kernels")):
        raise ArgumentError(
            "load_op_library",
            f"{name!r} defines no oar_register_ops / oar_register_kernels hook",
        )
    from oar.plugins import register

    register(module, name=f"op-library:{module.__name__}")
    return module
