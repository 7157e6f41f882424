"""Atomic saves: a reader sees the old checkpoint or the new one, never a half-written one.

Single files are written to a temporary file in the same directory, flushed,
fsync'ed and moved over the target with ``os.replace``. A directory save
writes every file into a staging directory next to the target, carries over
(by hard link) the entries of the old directory it does not rewrite, then
swaps the two directories with ``renameat2(RENAME_EXCHANGE)`` where the kernel
has it (otherwise two renames, with the old copy kept as ``.<name>.oar-old``
until the new one is in place). ``OAR_IO_FSYNC=0`` skips the fsyncs (faster,
still atomic against a killed process, not against power loss).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import IO

from oar_io import manifest
from oar_io.errors import CheckpointError, UnsafePathError
from oar_io.paths import contained

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_BUFFER = 1 << 20  # small headers are batched; large data writes go straight through


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_debris(directory: str, base: str) -> None:
    """Remove staging dirs / temp files of ``base`` left by saves whose process has died."""
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    prefix = f".{base}."
    for entry in entries:
        if not entry.startswith(prefix) or not entry.endswith((".oar-staging", ".oar-tmp")):
            continue
        pid = entry[len(prefix) :].split("-", 1)[0]
        if not pid.isdigit() or _pid_alive(int(pid)):
            continue
        path = os.path.join(directory, entry)
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)


def fsync_enabled() -> bool:
    return os.environ.get("OAR_IO_FSYNC", "1") not in ("0", "false", "no")


def _fsync_dir(path: str) -> None:
    if not fsync_enabled():
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_file(path: str) -> Iterator[IO[bytes]]:
    """Open a temporary file next to ``path``; on success it replaces ``path`` atomically."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    base = os.path.basename(path)
    clean_debris(directory, base)
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.{os.getpid()}-", suffix=".oar-tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb", buffering=_BUFFER) as f:
            yield f
            f.flush()
            if fsync_enabled():
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)


def _exchange(a: str, b: str) -> bool:
    """Swap two paths atomically (Linux renameat2); False if the call is unavailable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc != 0:
        err = ctypes.get_errno()
        if err in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: filesystem or kernel cannot
            return False
        raise OSError(err, os.strerror(err), a)
    return True


def _link_tree(src: str, dst: str) -> None:
    """Recreate ``src`` at ``dst`` with hard links (copies where links are impossible)."""

    def link(s: str, d: str) -> None:
        if os.path.lexists(d):  # rewritten by this save: keep the new file
            return
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)

    shutil.copytree(src, dst, copy_function=link, symlinks=True, dirs_exist_ok=True)


def _unsafe_to_swap(path: str) -> bool:
    """The cwd, its ancestors and the filesystem root are never swapped (files are replaced one by one)."""
    real = os.path.realpath(path)
    cwd = os.path.realpath(os.getcwd())
    return real == os.path.dirname(real) or cwd == real or cwd.startswith(real + os.sep)


_pending: list = []
_pending_registered: list = []


def _remove_later(path: str) -> None:
    """rmtree ``path`` on a daemon thread; :func:`wait_for_cleanup` waits for all of them."""
    import threading

    t = threading.Thread(
        target=shutil.rmtree,
        args=(path,),
        kwargs={"ignore_errors": True},
        name="oar-io-cleanup",
        daemon=True,
    )
    t.start()
    if not _pending_registered:
        import atexit

        atexit.register(wait_for_cleanup)  # a daemon thread dies with the interpreter
        _pending_registered.append(True)
    _pending.append(t)
    _pending[:] = [x for x in _pending if x.is_alive()]


def wait_for_cleanup() -> None:
    """Block until every background removal of replaced checkpoints has finished."""
    for t in list(_pending):
        t.join()
    _pending.clear()


class _Transaction:
    """A unit of files published by :meth:`commit`; ``with`` commits on success, else aborts."""

    def commit(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


class DirTransaction(_Transaction):
    """Collects the files of one directory save and publishes them all at once.

    ``open(relname)`` gives a binary file to write; :meth:`commit` makes the
    directory show the new files (and every old entry not rewritten) at once.
    """

    def __init__(self, dirname: str) -> None:
        self.dirname = os.path.abspath(dirname)
        parent = os.path.dirname(self.dirname)
        os.makedirs(parent, exist_ok=True)
        self._per_file = os.path.isdir(self.dirname) and _unsafe_to_swap(self.dirname)
        base = os.path.basename(self.dirname)
        clean_debris(parent, base)
        old = self.dirname + ".oar-old"
        if os.path.isdir(
            old
        ):  # a save died between its two renames: the old copy is the checkpoint
            if os.path.exists(self.dirname):
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.rename(old, self.dirname)
        self.staging = tempfile.mkdtemp(
            prefix=f".{base}.{os.getpid()}-", suffix=".oar-staging", dir=parent
        )
        self._written: list = []
        self._entries: dict = {}
        self.save_id = manifest.new_save_id()

    def path(self, relname: str) -> str:
        return os.path.join(self.staging, relname)

    @contextlib.contextmanager
    def open(self, relname: str, what: str = "file name") -> Iterator[IO[bytes]]:
        """A file to write ``dirname/relname``; ``relname`` must stay inside the directory."""
        contained(self.dirname, relname, what)
        if relname == manifest.DIR_MANIFEST:
            raise UnsafePathError(f"{what} {relname!r} is reserved for the checkpoint manifest")
        p = self.path(relname)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb", buffering=_BUFFER) as f:
            hw = manifest.HashingWriter(f)
            yield hw  # type: ignore[misc]  # a write-only IO[bytes] that hashes
            f.flush()
            if fsync_enabled():
                os.fsync(f.fileno())
        self._written.append(relname)
        self._entries[relname] = hw.entry()

    def _write_manifest(self, directory: str) -> None:
        """The manifest of this save plus the carried-over files the old one vouched for."""
        files = {}
        try:
            old = manifest.read(os.path.join(self.dirname, manifest.DIR_MANIFEST))
        except CheckpointError:
            old = None
        if old is not None and old.get("save_id") != self.save_id:
            for rel, entry in old["files"].items():
                if rel not in self._entries and os.path.isfile(os.path.join(directory, rel)):
                    files[rel] = entry
        files.update(self._entries)
        with atomic_file(os.path.join(directory, manifest.DIR_MANIFEST)) as f:
            f.write(manifest.dumps(self.save_id, files))

    def commit(self) -> None:
        parent = os.path.dirname(self.dirname)
        if self._per_file:  # not one unit: the manifest, replaced last, names the new files
            for rel in self._written:
                target = os.path.join(self.dirname, rel)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.replace(self.path(rel), target)
            self._write_manifest(self.dirname)
            _fsync_dir(self.dirname)
            shutil.rmtree(self.staging, ignore_errors=True)
            return
        if not os.path.exists(self.dirname):
            self._write_manifest(self.staging)
            _fsync_dir(self.staging)
            os.rename(self.staging, self.dirname)
            _fsync_dir(parent)
            return
        if not os.path.isdir(self.dirname):
            self.abort()
            raise NotADirectoryError(
                f"cannot save into '{self.dirname}': it exists and is not a directory"
            )
        written = set(self._written)
        for entry in os.listdir(self.dirname):
            if entry in written or entry == manifest.DIR_MANIFEST:
                continue
            src, dst = os.path.join(self.dirname, entry), os.path.join(self.staging, entry)
            if os.path.isdir(src) and not os.path.islink(src):
                _link_tree(src, dst)
            elif not os.path.lexists(dst):
                try:
                    os.link(src, dst, follow_symlinks=False)
                except OSError:
                    shutil.copy2(src, dst, follow_symlinks=False)
        self._write_manifest(self.staging)
        _fsync_dir(self.staging)
        if _exchange(self.staging, self.dirname):
            _fsync_dir(parent)
            # the old checkpoint now sits at the staging name: unlinking its files costs as much
            # as writing them, so it goes in the background (a later save removes what a dead
            # process left behind, see clean_debris)
            _remove_later(self.staging)
            return
        old = self.dirname + ".oar-old"
        shutil.rmtree(old, ignore_errors=True)
        os.rename(self.dirname, old)
        os.rename(self.staging, self.dirname)
        _fsync_dir(parent)
        shutil.rmtree(old, ignore_errors=True)

    def abort(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)


def _part_name(base: str, save_id: str, suffix: str) -> str:
    d, b = os.path.split(base)
    return os.path.join(d, f".{b}.{save_id}{suffix}.oar-part")


def clean_parts(base: str, keep: str | None) -> None:
    """Remove part files of ``base`` from other saves (whose process is dead, or this one's)."""
    d, b = os.path.split(os.path.abspath(base))
    prefix = f".{b}."
    try:
        entries = os.listdir(d)
    except OSError:
        return
    for entry in entries:
        if not entry.startswith(prefix) or not entry.endswith(".oar-part"):
            continue
        sid = entry[len(prefix) :].split(".", 1)[0]
        pid = sid.split("-", 1)[0]
        if sid == keep or not pid.isdigit():
            continue
        if int(pid) != os.getpid() and _pid_alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(d, entry))


def roll_forward(base: str) -> None:
    """Finish the renames of a save that died after writing its manifest (the manifest rules)."""
    try:
        m = manifest.read(base + manifest.PREFIX_MANIFEST)
    except CheckpointError:
        return
    if m is None:
        return
    for suffix in m["files"]:
        if suffix not in PREFIX_SUFFIXES:
            continue
        part = _part_name(base, m["save_id"], suffix)
        if os.path.exists(part):
            os.replace(part, base + suffix)


class PrefixTransaction(_Transaction):
    """The files of one ``fluid.save`` / ``save_dygraph`` (``prefix.pdparams`` ...) as one unit.

    Each part is written to a hidden ``.name.<save id><suffix>.oar-part`` file;
    :meth:`commit` then writes the manifest ``prefix.pdsave`` (the commit point)
    and renames the parts over their final names. A reader that finds a final
    file not matching the manifest reads the part file instead, so it sees the
    old save or the new one whatever instant it reads at, and a save killed
    at any point leaves one of the two loadable. ``replace_all`` (fluid.save)
    drops parts of the old save this one does not write; otherwise (save_dygraph)
    they stay in the checkpoint.
    """

    def __init__(self, base: str, replace_all: bool) -> None:
        self.base = os.path.abspath(base)
        os.makedirs(os.path.dirname(self.base), exist_ok=True)
        self.replace_all = replace_all
        self.save_id = manifest.new_save_id()
        self._entries: dict = {}
        roll_forward(self.base)
        clean_parts(self.base, None)
        directory, name = os.path.split(self.base)
        for suffix in (*PREFIX_SUFFIXES, manifest.PREFIX_MANIFEST):
            clean_debris(directory, name + suffix)

    @contextlib.contextmanager
    def open(self, suffix: str) -> Iterator[IO[bytes]]:
        part = _part_name(self.base, self.save_id, suffix)
        try:
            with open(part, "wb", buffering=_BUFFER) as f:
                hw = manifest.HashingWriter(f)
                yield hw  # type: ignore[misc]  # a write-only IO[bytes] that hashes
                f.flush()
                if fsync_enabled():
                    os.fsync(f.fileno())
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(part)
            raise
        self._entries[suffix] = hw.entry()

    def commit(self) -> None:
        mpath = self.base + manifest.PREFIX_MANIFEST
        files = {}
        if not self.replace_all:
            try:
                old = manifest.read(mpath)
            except CheckpointError:
                old = None
            for suffix in PREFIX_SUFFIXES:
                if suffix in self._entries or not os.path.isfile(self.base + suffix):
                    continue
                if old is not None and suffix in old["files"]:
                    files[suffix] = old["files"][suffix]
                elif old is None:  # a part written without a manifest joins this checkpoint
                    with open(self.base + suffix, "rb") as f:
                        files[suffix] = manifest.file_entry(f)
        files.update(self._entries)
        directory = os.path.dirname(self.base)
        _fsync_dir(directory)
        with atomic_file(mpath) as f:  # the commit point
            f.write(manifest.dumps(self.save_id, files))
        for suffix in self._entries:
            os.replace(_part_name(self.base, self.save_id, suffix), self.base + suffix)
        if self.replace_all:
            for suffix in PREFIX_SUFFIXES:
                if suffix not in files:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(self.base + suffix)
        _fsync_dir(directory)
        clean_parts(self.base, None)

    def abort(self) -> None:
        for suffix in self._entries:
            with contextlib.suppress(OSError):
                os.unlink(_part_name(self.base, self.save_id, suffix))


PREFIX_SUFFIXES = (".pdparams", ".pdopt", ".pdmodel")
