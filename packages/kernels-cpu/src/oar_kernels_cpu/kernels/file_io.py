"""The ``load`` kernel: read a tensor file through the format plugins (oar-io)."""

from __future__ import annotations

from typing import Any

from oar.api import registries

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


def read_tensor(path: str) -> Any:
    """The host array a tensor file holds (the first format plugin that recognises it)."""
    formats = registries().formats
    with open(path, "rb") as f:
        head = f.read(64)
        for name in formats.names():
            fmt = formats.get(name)
            if getattr(fmt, "kind", None) != "tensor" or not fmt.sniff(head):
                continue
            f.seek(0)
            return fmt.read(f, path)[0]
    if not formats.names():
        raise RuntimeError("load: reading tensor files needs the oar-io plugin: pip install oar-io")
    raise ValueError(
        f"load: {path} is neither a Fluid nor an oar tensor file (first bytes {head[:8]!r})"
    )


@kernel("load")
def load(inputs, attrs):
    out = xp.asarray(read_tensor(attrs["file_path"]))  # a host array: copied to the device
    if attrs["load_as_fp16"]:
        out = out.astype(xp.float16)
    return {"Out": out}
