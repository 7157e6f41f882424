"""cupy, imported lazily and probed once: no GPU or no cupy means an unavailable device, never an
import error (``import oar`` must work on every machine)."""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

INSTALL = "pip install oar-kernels-cuda[cuda12]  (or cupy-cuda11x for CUDA 11)"


@functools.lru_cache(maxsize=1)
def cupy_module() -> ModuleType | None:
    try:
        return importlib.import_module("cupy")
    except Exception:  # ImportError, or a broken CUDA install raising at import
        return None


@functools.lru_cache(maxsize=1)
def probe() -> tuple:
    """(device count, why unavailable or None). ``CUDA_VISIBLE_DEVICES`` is honoured by CUDA."""
    cupy = cupy_module()
    if cupy is None:
        return 0, f"cupy is not installed: {INSTALL}"
    try:
        if not cupy.is_available():
            return (
                0,
                "cupy found no usable NVIDIA GPU (no device, no driver, or CUDA_VISIBLE_DEVICES hides them)",
            )
        return int(cupy.cuda.runtime.getDeviceCount()), None
    except Exception as exc:  # CUDARuntimeError and friends
        return 0, f"CUDA runtime error: {exc}"


def available() -> bool:
    return probe()[0] > 0


def device_count() -> int:
    return probe()[0]


def unavailable_reason() -> str | None:
    return probe()[1]


class NumpyStandIn:
    """numpy under another name, bound as ``xp`` when cupy is absent: kernel families are then
    instantiated and registered exactly as on a GPU machine (so `oar plugins` shows the same
    coverage), but never run, because the device reports itself unavailable."""

    __name__ = "numpy_stand_in_for_cupy"

    def __getattr__(self, name: str):
        import numpy

        return getattr(numpy, name)


def array_module():
    """cupy when a GPU is usable, else the stand-in (see :class:`NumpyStandIn`)."""
    cupy = cupy_module()
    return cupy if cupy is not None and available() else NumpyStandIn()
