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
    _pending.append(t)
    _pending[:] = [x for x in _pending if x.is_alive()]


def wait_for_cleanup() -> None:
    """Block until every background removal of replaced checkpoints has finished."""
    for t in list(_pending):
        t.join()
    _pending.clear()


class DirTransaction:
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

    def path(self, relname: str) -> str:
        return os.path.join(self.staging, relname)

    @contextlib.contextmanager
    def open(self, relname: str) -> Iterator[IO[bytes]]:
        p = self.path(relname)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb", buffering=_BUFFER) as f:
            yield f
            f.flush()
            if fsync_enabled():
                os.fsync(f.fileno())
        self._written.append(relname)

    def commit(self) -> None:
        _fsync_dir(self.staging)
        parent = os.path.dirname(self.dirname)
        if self._per_file:
            for rel in self._written:
                target = os.path.join(self.dirname, rel)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.replace(self.path(rel), target)
            _fsync_dir(self.dirname)
            shutil.rmtree(self.staging, ignore_errors=True)
            return
        if not os.path.exists(self.dirname):
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
            if entry in written:
                continue
            src, dst = os.path.join(self.dirname, entry), os.path.join(self.staging, entry)
            if os.path.isdir(src) and not os.path.islink(src):
                _link_tree(src, dst)
            elif not os.path.lexists(dst):
                try:
                    os.link(src, dst, follow_symlinks=False)
                except OSError:
                    shutil.copy2(src, dst, follow_symlinks=False)
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

    def __enter__(self) -> DirTransaction:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()
