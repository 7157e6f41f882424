"""Reading a checkpoint as one unit while another process may be replacing it.

A directory is read through a descriptor opened once (:class:`DirSnapshot`):
an atomic directory swap by a writer does not change what the descriptor
sees, and every file listed in the directory's manifest is checked against
it. If the old copy is removed under the reader, or a check fails while the
path now names another directory, the whole read starts again on the new
one. A ``fluid.save`` prefix is read by its manifest (:func:`open_prefix`),
falling back to the part files of a save that is still renaming them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import IO, Any

from oar_io import manifest
from oar_io.atomic import PREFIX_SUFFIXES, _part_name
from oar_io.errors import CorruptFileError, MissingVariableError, at
from oar_io.paths import contained

ATTEMPTS = 20


class _Raced(Exception):
    """The checkpoint changed under the reader: read it again."""


class DirSnapshot:
    """A directory held open: files are opened relative to it and checked against its manifest."""

    def __init__(self, dirname: str) -> None:
        self.dirname = dirname
        self.fd = os.open(dirname, os.O_RDONLY | os.O_DIRECTORY)
        self.bad: set = set()
        try:
            self.ident = _ident(os.fstat(self.fd))
            try:
                mfd = os.open(manifest.DIR_MANIFEST, os.O_RDONLY, dir_fd=self.fd)
            except FileNotFoundError:
                self.manifest = None
            else:
                self.manifest = manifest.read_fd(mfd, os.path.join(dirname, manifest.DIR_MANIFEST))
        except BaseException:
            os.close(self.fd)
            raise

    def moved(self) -> bool:
        """Whether ``dirname`` now names another directory (or none) than the one held."""
        try:
            return _ident(os.stat(self.dirname)) != self.ident
        except OSError:
            return True

    def open(self, relname: str, what: str) -> IO[bytes]:
        """``relname`` opened for reading, verified against the manifest when it lists it.

        A file that does not match is still returned, so the caller's parser can
        name what is wrong in its own terms; :meth:`check` then refuses it.
        """
        contained(self.dirname, relname, what)
        try:
            fd = os.open(relname, os.O_RDONLY, dir_fd=self.fd)
        except FileNotFoundError:
            if self.moved():
                raise _Raced() from None
            raise
        f = os.fdopen(fd, "rb")
        entry = None if self.manifest is None else self.manifest["files"].get(relname)
        if entry is not None and not manifest.matches(f, entry):
            if self.moved():
                f.close()
                raise _Raced()
            self.bad.add(relname)
        return f

    def check(self, relname: str, name: str | None = None) -> None:
        """Refuse ``relname`` if it did not match the manifest (after the caller parsed it)."""
        if relname in self.bad:
            raise CorruptFileError(
                f"{at(os.path.join(self.dirname, relname), name)} does not match the "
                f"checkpoint manifest '{manifest.DIR_MANIFEST}' (size or checksum); the file is "
                f"damaged or was replaced by hand"
            )

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> DirSnapshot:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _ident(st: os.stat_result) -> tuple:
    return (st.st_dev, st.st_ino)


def read_dir(dirname: str, fn: Callable[[DirSnapshot], Any]) -> Any:
    """``fn(snapshot)``, started again on the new directory when a writer replaced it meanwhile."""
    for attempt in range(ATTEMPTS):
        try:
            snap = DirSnapshot(dirname)
        except FileNotFoundError:
            # between the two renames of the fallback swap the directory is briefly absent
            if attempt + 1 < ATTEMPTS and os.path.isdir(dirname.rstrip(os.sep) + ".oar-old"):
                time.sleep(0.005 * (attempt + 1))
                continue
            raise
        try:
            with snap:
                return fn(snap)
        except _Raced:
            time.sleep(0.001 * attempt)
    raise CorruptFileError(
        f"directory '{dirname}' kept changing while it was read ({ATTEMPTS} attempts); "
        f"is a process saving into it in a loop?"
    )


def open_prefix(base: str) -> dict | None:
    """``{suffix: (open file, matches)}`` of the ``fluid.save`` checkpoint at ``base``.

    ``matches`` is False for a file that does not match the manifest: the caller
    parses it first (its format names what is damaged), then refuses it with
    :func:`mismatch`. None when ``base`` has no manifest (files written by Fluid or an older oar):
    the caller then opens the files itself.
    """
    mpath = base + manifest.PREFIX_MANIFEST
    for attempt in range(ATTEMPTS):
        m = manifest.read(mpath)
        if m is None:
            return None
        out: dict = {}
        try:
            for suffix, entry in m["files"].items():
                if suffix not in PREFIX_SUFFIXES:
                    raise CorruptFileError(f"manifest '{mpath}' names an unknown part {suffix!r}")
                out[suffix] = _open_part(base, m["save_id"], suffix, entry, mpath)
            return out
        except _Raced:
            for f, _ in out.values():
                f.close()
            time.sleep(0.001 * attempt)
        except BaseException:
            for f, _ in out.values():
                f.close()
            raise
    raise CorruptFileError(
        f"checkpoint '{base}' kept changing while it was read ({ATTEMPTS} attempts)"
    )


def mismatch(path: str) -> CorruptFileError:
    return CorruptFileError(
        f"file '{path}' does not match its checkpoint manifest (size or checksum); the file is "
        f"damaged or was replaced by hand"
    )


def _open_part(base: str, save_id: str, suffix: str, entry: dict, mpath: str) -> tuple:
    # twice: the part may be renamed over the final name between the two opens
    for path in (base + suffix, _part_name(base, save_id, suffix)) * 2:
        try:
            f = open(path, "rb")
        except FileNotFoundError:
            continue
        if manifest.matches(f, entry):
            return f, True
        f.close()
    m = manifest.read(mpath)
    if m is None or m["save_id"] != save_id:
        raise _Raced()  # a newer save committed while this one was read
    try:
        return open(base + suffix, "rb"), False
    except FileNotFoundError:
        raise MissingVariableError(
            f"file '{base + suffix}' is missing, but the manifest '{mpath}' lists it"
        ) from None
