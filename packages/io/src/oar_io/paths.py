"""Keeping file names that come from variable names (or from model files) inside their directory.

A variable named ``../x`` or ``/etc/passwd`` must not make a save write, or a
load read, outside the directory the user named. Every path a save or load
derives from a name goes through :func:`contained`, which checks the name's
form and then the resolved path (symlinks followed) before anything is opened.
"""

from __future__ import annotations

import os

from oar_io.errors import UnsafePathError


def check_relname(name: str, what: str, dirname: str) -> None:
    """Refuse a name that is not a plain relative path of non-empty, non-``..`` parts."""
    bad = None
    if not isinstance(name, str) or not name:
        bad = "is empty"
    elif "\0" in name:
        bad = "contains a NUL byte"
    elif os.path.isabs(name) or name.startswith(("/", "\\")):
        bad = "is an absolute path"
    else:
        parts = name.replace("\\", "/").split("/")
        if any(p in ("", ".", "..") for p in parts):
            bad = "has an empty, '.' or '..' path component"
    if bad:
        raise UnsafePathError(
            f"{what} {_quote(name)} {bad}: as a file name it would not stay inside the "
            f"directory '{dirname}'"
        )


def contained(dirname: str, name: str, what: str) -> str:
    """``dirname/name``, checked to resolve (symlinks followed) to a path inside ``dirname``.

    ``what`` says whose name it is (``"save_vars: variable"``,
    ``"model file 'm' names persistable variable"``) for the error message.
    Nothing is opened or read here.
    """
    check_relname(name, what, dirname)
    root = os.path.realpath(dirname)
    path = os.path.join(dirname, name)
    real = os.path.realpath(path)
    if not (real == root or real.startswith(root.rstrip(os.sep) + os.sep)):
        raise UnsafePathError(
            f"{what} {_quote(name)}: its file '{path}' resolves (through a symbolic link) to a "
            f"place outside the directory '{dirname}'; refusing to use it"
        )
    return path


def _quote(name: object) -> str:
    text = repr(name)
    return text if len(text) <= 120 else text[:117] + "...'"
