"""What to tell a user who lacks a kernel or a device: what to install, what to re-enable, or that
installing nothing will help. Shared by the executor, the dygraph tracer and place resolution so the
three say the same thing."""

from __future__ import annotations

import importlib.metadata
import os

# the distribution that provides each built-in device, and the command that installs it
DEVICE_DISTRIBUTIONS = {"cpu": "oar-kernels-cpu", "cuda": "oar-kernels-cuda"}
INSTALL_COMMANDS = {
    "cpu": "pip install oar-kernels-cpu",
    "cuda": "pip install oar-kernels-cuda[cuda12]",
}


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def device_plugin_hint(device: str) -> str | None:
    """How to get ``device``'s plugin loaded; None when it is installed and loaded already."""
    from oar.plugins import ENV_DISABLE, disabled_distribution

    dist = DEVICE_DISTRIBUTIONS.get(device, f"oar-kernels-{device}")
    disabled = disabled_distribution(dist)
    if disabled is not None:
        return (
            f"{dist} is installed but disabled by {ENV_DISABLE}={os.environ.get(ENV_DISABLE, '')!r}: "
            f"remove '{disabled.name}' from it"
        )
    if _installed(dist):
        return None
    return f"install it with `{INSTALL_COMMANDS.get(device, 'pip install ' + dist)}`"


def _dtype_list(dtypes: list) -> str:
    return ", ".join("any dtype" if d is None else str(d) for d in dtypes)


def kernel_not_found_message(registries, op_type: str, device: str, dtype) -> str:
    """The message of a KernelNotFoundError: what exists instead, and what (if anything) to install."""
    kernels = registries.kernels
    msg = f"op '{op_type}' has no kernel for device '{device}' and dtype {dtype}"
    on_device = kernels.dtypes_for(op_type, device)
    elsewhere = sorted(kernels.devices_for(op_type) - {device})
    if on_device:
        msg += (
            f"; on '{device}' it has kernels for: {_dtype_list(on_device)} "
            f"(convert the input, e.g. with fluid.layers.cast)"
        )
    elif elsewhere:
        msg += f"; kernels exist only for devices: {', '.join(elsewhere)}"
    else:
        msg += "; no installed plugin registers a kernel for it"
    if registries.ops.family(op_type) is not None:  # a core op: the device plugin has its kernels
        hint = None if on_device else device_plugin_hint(device)
        if hint:
            msg += f"; {hint}"
    else:
        msg += (
            f"; the op is defined by the plugin '{registries.ops.owner(op_type)}', so its kernels "
            f"come from that plugin (or another one that registers them), not from a device plugin"
        )
    return msg
