"""Choosing a format: by name from the ``formats`` registry, or by sniffing a file's first bytes.

Tensor formats have ``kind == "tensor"`` and ``write(f, name, array, lod)`` /
``read(f, path, name) -> (array, lod)`` / ``sniff(head) -> bool``. Program
formats have ``kind == "program"`` and ``dumps(program, feeds, fetches) ->
bytes`` / ``loads(data) -> (program, feeds, fetches)`` / ``sniff(head)``.
Any plugin can register more through ``oar_register_formats``.

The default tensor format for saves is ``oar`` (checked); ``OAR_IO_FORMAT``
or :func:`set_default_format` changes it, and every save function takes
``format=`` by name. Loads sniff, so files of any registered format load.
"""

from __future__ import annotations

import os
from typing import Any

from oar_io.errors import CorruptFileError

DEFAULT_TENSOR_FORMAT = "oar"
DEFAULT_PROGRAM_FORMAT = "json"
_default: dict = {}


def _registry():
    from oar.api import registries

    return registries().formats


def set_default_format(name: str | None, kind: str = "tensor") -> None:
    """Make ``name`` the format saves use when none is given (``None`` restores the built-in default)."""
    if name is not None:
        get_format(name, kind)
    _default[kind] = name


def default_format_name(kind: str = "tensor") -> str:
    if _default.get(kind):
        return _default[kind]
    if kind == "tensor":
        return os.environ.get("OAR_IO_FORMAT") or DEFAULT_TENSOR_FORMAT
    return os.environ.get("OAR_IO_PROGRAM_FORMAT") or DEFAULT_PROGRAM_FORMAT


def get_format(name: str | None, kind: str = "tensor") -> Any:
    """The registered format ``name`` (the default when None), checked to be of ``kind``."""
    fmt = _registry().get(name or default_format_name(kind))
    if getattr(fmt, "kind", None) != kind:
        raise ValueError(
            f"format '{fmt.name}' is a {getattr(fmt, 'kind', '?')} format, not a {kind} format"
        )
    return fmt


def sniff(head: bytes, path: str, kind: str = "tensor") -> Any:
    """The registered format whose ``sniff`` accepts ``head``; checked formats are tried first."""
    candidates = [f for _, f in _registry().items() if getattr(f, "kind", None) == kind]
    candidates.sort(key=lambda f: not getattr(f, "checked", False))
    for fmt in candidates:
        if fmt.sniff(head):
            return fmt
    if not head:
        raise CorruptFileError(f"file '{path}' is empty")
    names = ", ".join(f.name for f in candidates)
    raise CorruptFileError(
        f"file '{path}' is in no known {kind} format (tried {names}); "
        f"it starts with {bytes(head[:8])!r}"
    )
