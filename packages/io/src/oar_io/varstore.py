"""Moving variables between a Scope and files: the engine under every save/load function."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from oar_io import snapshot
from oar_io.atomic import DirTransaction
from oar_io.errors import CheckpointError, MismatchError, MissingVariableError, at
from oar_io.formats import get_format, sniff
from oar_io.paths import check_relname

_HEAD = 64


def current_scope() -> Any:
    from oar.api import global_scope

    return global_scope()


def value_of(scope: Any, name: str) -> tuple:
    """``(array, lod)`` of ``name`` in ``scope``; a clear error when it holds nothing."""
    from oar.api import LoDTensor, SelectedRows

    v = scope.find_var(name)
    if v is None or not v.is_initialized():
        raise CheckpointError(
            f"cannot save variable '{name}': it has no value in the scope "
            f"(run the startup program, or load it, before saving)"
        )
    val = v.value
    if isinstance(val, SelectedRows):
        raise TypeError(
            f"cannot save variable '{name}': SelectedRows values are not supported by "
            f"save/load; save the dense parameter instead"
        )
    if isinstance(val, LoDTensor):
        return np.asarray(val), val.lod()
    return np.asarray(val), []


def store(scope: Any, name: str, array: np.ndarray, lod: list) -> None:
    """Put a loaded array into ``scope`` without copying it."""
    t = scope.var(name).get_tensor()
    t._array = array
    t._lod = [list(lvl) for lvl in lod]


def write_vars(
    dirname: str,
    items: Iterable,
    filename: str | None,
    fmt_name: str | None,
    extra: dict | None = None,
    fn: str = "save_vars",
) -> None:
    """Write ``(name, array, lod)`` items (one file each, or all in ``filename``) plus ``extra`` files.

    Every file name (variable names included) is checked to stay inside
    ``dirname`` before anything is written.
    """
    fmt = get_format(fmt_name, "tensor")
    items = sorted(items, key=lambda it: it[0])
    for relname in extra or {}:
        check_relname(relname, f"{fn}: file name", dirname)
    if filename is not None:
        check_relname(filename, f"{fn}: filename", dirname)
    else:
        for name, _, _ in items:
            check_relname(name, f"{fn}: variable", dirname)
    with DirTransaction(dirname) as tx:
        for relname, data in (extra or {}).items():
            with tx.open(relname, f"{fn}: file name") as f:
                f.write(data)
        if filename is not None:
            with tx.open(filename, f"{fn}: filename") as f:
                for name, array, lod in items:
                    fmt.write(f, name, array, lod)
        else:
            for name, array, lod in items:
                with tx.open(name, f"{fn}: variable") as f:
                    fmt.write(f, name, array, lod)


def _expect(var: Any, array: np.ndarray, path: str) -> None:
    """Refuse a value whose dtype or shape differs from the program's variable (no silent reshape)."""
    if var is None:
        return
    want_dtype = getattr(var, "dtype", None)
    if want_dtype is not None and array.dtype.name != want_dtype:
        raise MismatchError(
            f"{at(path, var.name)} holds {array.dtype.name} data but the program's variable "
            f"is {want_dtype}"
        )
    shape = getattr(var, "shape", None)
    if shape is not None:
        ok = len(shape) == array.ndim and all(w < 0 or w == g for w, g in zip(shape, array.shape))
        if not ok:
            raise MismatchError(
                f"{at(path, var.name)} holds shape {list(array.shape)} but the program's "
                f"variable has shape {list(shape)}; the checkpoint was saved from a "
                f"different model"
            )


def _missing(dirname: str, path: str, name: str) -> MissingVariableError:
    hint = ""
    if not os.path.isdir(dirname):
        hint = f" (the directory '{dirname}' does not exist)"
        if os.path.isdir(dirname.rstrip(os.sep) + ".oar-old"):
            hint += (
                f"; an interrupted save left the previous checkpoint in '{dirname.rstrip(os.sep)}.oar-old' "
                f"(the next save to '{dirname}' restores it, or rename it back)"
            )
    return MissingVariableError(
        f"no saved value for variable '{name}': file '{path}' not found{hint}"
    )


def read_vars(
    dirname: str, variables: list, filename: str | None, what: str = "load_vars: variable"
) -> dict:
    """Read ``variables`` (Variables, or names) into ``{name: (array, lod)}``, verifying each.

    The directory is read as one snapshot (see :mod:`oar_io.snapshot`): a save
    replacing it meanwhile gives the old values or the new ones, never a mix.
    """
    if not os.path.isdir(dirname):
        names = [v if isinstance(v, str) else v.name for v in variables]
        if filename is not None:
            raise MissingVariableError(
                f"combined parameter file '{os.path.join(dirname, filename)}' not found (the "
                f"directory '{dirname}' does not exist)"
            )
        if names:
            raise _missing(dirname, os.path.join(dirname, names[0]), names[0])
        return {}
    return snapshot.read_dir(dirname, lambda snap: read_snapshot(snap, variables, filename, what))


def read_snapshot(snap: Any, variables: list, filename: str | None, what: str) -> dict:
    """:func:`read_vars` on an open :class:`~oar_io.snapshot.DirSnapshot`."""
    dirname = snap.dirname
    out: dict = {}
    named = [
        (v if isinstance(v, str) else v.name, None if isinstance(v, str) else v) for v in variables
    ]
    for name, _ in named:  # every name is checked before any file is opened
        check_relname(name, what, dirname)
    if filename is not None:
        path = os.path.join(dirname, filename)
        named.sort(key=lambda nv: nv[0])
        try:
            f = snap.open(filename, "parameter file name")
        except FileNotFoundError:
            raise MissingVariableError(
                f"combined parameter file '{path}' not found (it should hold "
                f"{', '.join(n for n, _ in named[:5])}{'...' if len(named) > 5 else ''})"
            ) from None
        with f:
            fmt = None
            for name, var in named:
                head = f.peek(_HEAD)[:_HEAD] if hasattr(f, "peek") else b""
                if not head:
                    raise MismatchError(
                        f"{at(path, name)}: the combined file ends before this variable; it "
                        f"holds fewer variables than the program needs ({len(named)})"
                    )
                fmt = fmt or sniff(head, path)
                array, lod = fmt.read(f, path, name)
                _expect(var, array, path)
                out[name] = (array, lod)
            rest = f.read(1)
            if rest:
                raise MismatchError(
                    f"file '{path}' holds more data after the {len(named)} variables the "
                    f"program needs; it was saved for a different variable list"
                )
        snap.check(filename)
        return out
    for name, var in named:
        path = os.path.join(dirname, name)
        try:
            f = snap.open(name, what)
        except (FileNotFoundError, NotADirectoryError):
            raise _missing(dirname, path, name) from None
        with f:
            fmt = sniff(f.peek(_HEAD)[:_HEAD], path)
            array, lod = fmt.read(f, path, name)
            if f.read(1):
                raise CheckpointError(
                    f"{at(path, name)} has data after the tensor; it is not a single-variable file"
                )
        snap.check(name, name)
        _expect(var, array, path)
        out[name] = (array, lod)
    return out
