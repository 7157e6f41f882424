"""Places name where a program runs: ``CPUPlace()``, ``CUDAPlace(i)``.

A place maps to a device that a kernel plugin registered. Asking for a device
that is missing or unavailable raises with advice, unless
``OAR_FALLBACK_DEVICE=cpu`` is set, which runs on the CPU with a warning (so
GPU-written samples run unchanged on a CPU-only machine).
"""

from __future__ import annotations

import os
import warnings

from oar.errors import DeviceUnavailableError
from oar.install_hints import INSTALL_COMMANDS, device_plugin_hint

ENV_FALLBACK = "OAR_FALLBACK_DEVICE"


class Place:
    device: str = "cpu"
    device_id: int = 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Place) and (self.device, self.device_id) == (
            other.device,
            other.device_id,
        )

    def __hash__(self) -> int:
        return hash((self.device, self.device_id))

    def is_cpu_place(self) -> bool:
        return self.device == "cpu"

    def is_gpu_place(self) -> bool:
        return self.device == "cuda"

    def is_cuda_pinned_place(self) -> bool:
        return False

    def gpu_device_id(self) -> int:
        return self.device_id


class CPUPlace(Place):
    def __init__(self) -> None:
        self.device = "cpu"
        self.device_id = 0

    def __repr__(self) -> str:
        return "CPUPlace"


class CUDAPlace(Place):
    def __init__(self, device_id: int = 0) -> None:
        if not isinstance(device_id, int) or device_id < 0:
            raise ValueError(
                f"CUDAPlace: device_id must be a non-negative int, given {device_id!r}"
            )
        self.device = "cuda"
        self.device_id = device_id

    def __repr__(self) -> str:
        return f"CUDAPlace({self.device_id})"


class CUDAPinnedPlace(Place):
    """Host memory for fast copies to a GPU; runs as the CPU here."""

    def __init__(self) -> None:
        self.device = "cpu"
        self.device_id = 0

    def is_cuda_pinned_place(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "CUDAPinnedPlace"


def resolve_device(place: Place):
    """The registered device for ``place``, honouring the CPU fallback policy."""
    from oar.plugins import plugin_infos, registries

    place = place or CPUPlace()
    dev = registries().devices.get(place.device)
    ok = dev is not None and dev.available() and place.device_id < max(dev.count(), 1)
    if ok:
        return dev
    reason = (
        f"no plugin provides the '{place.device}' device"
        if dev is None
        else f"the '{place.device}' device (from {dev.plugin}) is not available on this machine"
        + (f" ({dev.unavailable_reason()})" if dev.unavailable_reason() else "")
    )
    failed = [p for p in plugin_infos() if p.error]
    if failed:
        reason += "; plugins that failed to load: " + ", ".join(
            f"{p.name} ({p.error})" for p in failed
        )
    fallback = place.device != "cpu"
    if fallback and os.environ.get(ENV_FALLBACK) == "cpu":
        warnings.warn(
            f"{place!r} requested but {reason}; running on CPU ({ENV_FALLBACK}=cpu)",
            RuntimeWarning,
            stacklevel=3,
        )
        return resolve_device(CPUPlace())
    hint = device_plugin_hint(place.device) if dev is None else None
    advice = [hint] if hint else []
    if fallback:  # only a non-CPU program can fall back to the CPU
        advice.append(f"set {ENV_FALLBACK}=cpu to run it on the CPU instead")
    raise DeviceUnavailableError(
        f"cannot run on {place!r}: {reason}"
        + (f". To fix: {'; or '.join(advice)}" if advice else "")
    )


def cpu_places(device_count: int | None = None) -> list:
    """``device_count`` CPUPlaces (default: the ``CPU_NUM`` env var, else the core count)."""
    if device_count is None:
        device_count = int(os.environ.get("CPU_NUM", os.cpu_count() or 1))
    return [CPUPlace() for _ in range(device_count)]


def cuda_places(device_ids: int | list | None = None) -> list:
    """CUDAPlaces for ``device_ids`` (default: ``FLAGS_selected_gpus`` or every GPU)."""
    from oar.plugins import registries

    dev = registries().devices.get("cuda")
    count = dev.count() if dev is not None and dev.available() else 0
    if device_ids is None:
        sel = os.environ.get("FLAGS_selected_gpus")
        device_ids = [int(x) for x in sel.split(",")] if sel else list(range(count))
    elif isinstance(device_ids, int):
        device_ids = [device_ids]
    if count == 0:
        if os.environ.get(ENV_FALLBACK) == "cpu":
            return [CUDAPlace(i) for i in (device_ids or [0])]
        why = dev.unavailable_reason() if dev is not None else None
        raise DeviceUnavailableError(
            "cuda_places(): no CUDA device is available"
            + (
                f": {why}"
                if why
                else f". Install it with `{INSTALL_COMMANDS['cuda']}` on a GPU machine"
            )
            + f" (or set {ENV_FALLBACK}=cpu)"
        )
    return [CUDAPlace(i) for i in device_ids]


def is_compiled_with_cuda() -> bool:
    """True when a plugin provides the cuda device and it is usable here (Fluid code branches on
    this to pick CUDAPlace, so an installed plugin on a machine without a GPU answers False)."""
    from oar.plugins import registries

    dev = registries().devices.get("cuda")
    return dev is not None and bool(dev.available())
