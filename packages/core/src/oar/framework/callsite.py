"""Find the user's source line that called into oar, for error messages."""

from __future__ import annotations

import linecache
import os
import sys

_OWN_ROOTS: list = []


def _own_roots() -> list:
    if not _OWN_ROOTS:
        import oar

        _OWN_ROOTS.append(os.path.dirname(oar.__file__) + os.sep)
    return _OWN_ROOTS


def add_internal_root(path: str) -> None:
    """Plugins add their package dir so their frames are skipped too."""
    _own_roots()
    root = os.path.dirname(path) + os.sep if os.path.isfile(path) else path.rstrip(os.sep) + os.sep
    if root not in _OWN_ROOTS:
        _OWN_ROOTS.append(root)


def user_callsite() -> tuple | None:
    """(filename, lineno, function, source line) of the first frame outside oar."""
    roots = tuple(_own_roots())
    frame = sys._getframe(1)
    while frame is not None:
        fn = frame.f_code.co_filename
        if not fn.startswith(roots) and not _is_plugin(fn):
            line = linecache.getline(fn, frame.f_lineno)
            return (fn, frame.f_lineno, frame.f_code.co_name, line.strip())
        frame = frame.f_back
    return None


def _is_plugin(filename: str) -> bool:
    norm = filename.replace("\\", "/")
    parts = norm.split("/")
    if "/pluggy/" in norm or norm.endswith("/contextlib.py") or norm.startswith("<frozen"):
        return True
    return any(p.startswith("oar_") for p in parts[:-1])
