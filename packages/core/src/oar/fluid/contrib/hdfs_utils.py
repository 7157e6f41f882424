"""``fluid.contrib.HDFSClient``, ``multi_download`` and ``multi_upload``: HDFS through the
``hadoop fs`` command line, as Fluid 1.8.

Every operation runs ``$hadoop_home/bin/hadoop fs -D<key>=<value>... -<command> ...`` in a
subprocess with a time limit (``HDFSClient.timeout_s``), retrying a failing command
(``retry_times``, ``HDFSClient.retry_delay_s`` apart). Methods report success as Fluid's do:
``True``/``False`` (``ls``/``lsr`` return lists of paths), logging failures.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor

from oar.errors import ArgumentError

__all__ = ["HDFSClient", "multi_download", "multi_upload"]

_log = logging.getLogger("oar.contrib.hdfs")


class HDFSClient:
    """A client of one HDFS cluster: ``hadoop_home`` holds ``bin/hadoop``; ``configs`` maps
    Hadoop properties (``fs.default.name``, ``hadoop.job.ugi``, ...) passed as ``-D``."""

    timeout_s: float = 600.0
    retry_delay_s: float = 0.5

    def __init__(self, hadoop_home: str, configs: Mapping) -> None:
        if not isinstance(configs, Mapping):
            raise ArgumentError(
                "HDFSClient", f"configs must be a dict of Hadoop properties, given {configs!r}"
            )
        self.hadoop_home = hadoop_home
        self.configs = dict(configs)
        self.pre_commands = [os.path.join(hadoop_home, "bin", "hadoop"), "fs"] + [
            f"-D{k}={v}" for k, v in self.configs.items()
        ]

    def _run(self, commands: list, retry_times: int = 5) -> tuple[int, str, str]:
        """``(returncode, stdout, stderr)`` of the last try; 124 when a try ran past
        ``timeout_s``, 127 when ``hadoop`` cannot be started."""
        cmd = self.pre_commands + [str(c) for c in commands]
        code, out, err = 1, "", ""
        for attempt in range(max(int(retry_times), 0) + 1):
            if attempt:
                time.sleep(self.retry_delay_s)
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout_s)
                code, out, err = done.returncode, done.stdout, done.stderr
            except subprocess.TimeoutExpired:
                code, out, err = 124, "", f"timed out after {self.timeout_s} s"
            except OSError as exc:
                return 127, "", str(exc)
            if code == 0:
                break
            _log.warning("try %d of %s failed (%d): %s", attempt, " ".join(cmd), code, err)
        return code, out, err

    def is_exist(self, hdfs_path: str | None = None) -> bool:
        """Whether ``hdfs_path`` exists (``-test -e``)."""
        return self._run(["-test", "-e", hdfs_path], retry_times=0)[0] == 0

    def is_dir(self, hdfs_path: str | None = None) -> bool:
        """Whether ``hdfs_path`` is a directory (``-test -d``)."""
        return self._run(["-test", "-d", hdfs_path], retry_times=0)[0] == 0

    def delete(self, hdfs_path: str) -> bool:
        """Remove ``hdfs_path`` (a directory recursively); True when it is gone."""
        if not self.is_exist(hdfs_path):
            return True
        command = "-rmr" if self.is_dir(hdfs_path) else "-rm"
        ok = self._run([command, hdfs_path])[0] == 0
        if not ok:
            _log.error("HDFS delete of %s failed", hdfs_path)
        return ok

    def rename(self, hdfs_src_path: str, hdfs_dst_path: str, overwrite: bool = False) -> bool:
        """Move ``hdfs_src_path`` to ``hdfs_dst_path`` (``-mv``), replacing an existing
        destination only when ``overwrite``."""
        if self.is_exist(hdfs_dst_path):
            if not overwrite:
                _log.error("HDFS rename: %s exists (overwrite=False)", hdfs_dst_path)
                return False
            self.delete(hdfs_dst_path)
        return self._run(["-mv", hdfs_src_path, hdfs_dst_path])[0] == 0

    @staticmethod
    def make_local_dirs(local_path: str) -> None:
        """Create the local directory ``local_path`` with its parents."""
        os.makedirs(local_path, exist_ok=True)

    def makedirs(self, hdfs_path: str) -> bool:
        """Create the HDFS directory ``hdfs_path`` with its parents (``-mkdir -p``)."""
        if self.is_exist(hdfs_path):
            return True
        ok = self._run(["-mkdir", "-p", hdfs_path])[0] == 0
        if not ok:
            _log.error("HDFS mkdir of %s failed", hdfs_path)
        return ok

    def upload(
        self, hdfs_path: str, local_path: str, overwrite: bool = False, retry_times: int = 5
    ) -> bool:
        """Put the local file ``local_path`` at ``hdfs_path`` (``-put``)."""
        if not os.path.exists(local_path):
            _log.error("upload: local path %s does not exist", local_path)
            return False
        if self.is_exist(hdfs_path):
            if not overwrite:
                _log.error("upload: HDFS path %s exists (overwrite=False)", hdfs_path)
                return False
            self.delete(hdfs_path)
        parent = os.path.dirname(hdfs_path.rstrip("/"))
        if parent and not self.makedirs(parent):
            return False
        ok = self._run(["-put", local_path, hdfs_path], retry_times)[0] == 0
        if not ok:
            _log.error("upload of %s to HDFS %s failed", local_path, hdfs_path)
        return ok

    def download(
        self, hdfs_path: str, local_path: str, overwrite: bool = False, unzip: bool = False
    ) -> bool:
        """Get ``hdfs_path`` into ``local_path`` (``-get``); ``unzip`` unpacks a downloaded
        archive (.tar, .tar.gz, .zip, ...) next to it."""
        if not self.is_exist(hdfs_path):
            _log.error("download: HDFS path %s does not exist", hdfs_path)
            return False
        if os.path.exists(local_path):
            if not overwrite:
                _log.error("download: local path %s exists (overwrite=False)", local_path)
                return False
            if os.path.isdir(local_path) and not os.path.islink(local_path):
                shutil.rmtree(local_path)
            else:
                os.remove(local_path)
        parent = os.path.dirname(os.path.abspath(local_path))
        self.make_local_dirs(parent)
        if self._run(["-get", hdfs_path, local_path])[0] != 0:
            _log.error("download of HDFS %s to %s failed", hdfs_path, local_path)
            return False
        if unzip and os.path.isfile(local_path):
            shutil.unpack_archive(local_path, parent)
        return True

    def _listing(self, command: str, hdfs_path: str) -> list[list[str]]:
        code, out, err = self._run([command, hdfs_path])
        if code != 0:
            _log.error("HDFS %s %s failed: %s", command, hdfs_path, err)
            return []
        return [f for f in (line.split(None, 7) for line in out.splitlines()) if len(f) == 8]

    def ls(self, hdfs_path: str) -> list[str]:
        """The paths directly under ``hdfs_path`` (``-ls``)."""
        return [f[7] for f in self._listing("-ls", hdfs_path)]

    def lsr(self, hdfs_path: str, only_file: bool = True, sort: bool = True) -> list[str]:
        """The paths below ``hdfs_path`` at any depth (``-lsr``): files only when
        ``only_file``, oldest first (modification time) when ``sort``."""
        rows = self._listing("-lsr", hdfs_path)
        if only_file:
            rows = [f for f in rows if not f[0].startswith("d")]
        if sort:
            rows = sorted(rows, key=lambda f: (f[5], f[6]))
        return [f[7] for f in rows]


def _relative(path: str, root: str) -> str:
    root = root.rstrip("/")
    for prefix in (root + "/", root.split("://", 1)[-1] + "/"):
        at = path.find(prefix)
        if at >= 0:
            return path[at + len(prefix) :]
    return os.path.basename(path)


def _pool_size(multi_processes: int) -> int:
    if not isinstance(multi_processes, int) or multi_processes < 1:
        raise ArgumentError(
            "multi_download", f"multi_processes must be a positive int, given {multi_processes!r}"
        )
    return multi_processes


def multi_download(
    client: HDFSClient,
    hdfs_path: str,
    local_path: str,
    trainer_id: int,
    trainers: int,
    multi_processes: int = 5,
) -> list[str]:
    """Download this trainer's share of the files below ``hdfs_path`` (file i goes to trainer
    ``i % trainers``) into ``local_path``, keeping their relative paths, ``multi_processes``
    at a time. Returns the local paths of the files downloaded."""
    if not 0 <= trainer_id < trainers:
        raise ArgumentError(
            "multi_download", f"trainer_id must be in [0, {trainers}), given {trainer_id!r}"
        )
    files = client.lsr(hdfs_path, sort=True)
    mine = [f for i, f in enumerate(files) if i % trainers == trainer_id]
    targets = [os.path.join(local_path, _relative(f, hdfs_path)) for f in mine]
    client.make_local_dirs(local_path)
    with ThreadPoolExecutor(_pool_size(multi_processes)) as pool:
        done = list(
            pool.map(lambda a: client.download(a[0], a[1], overwrite=True), zip(mine, targets))
        )
    return [t for t, ok in zip(targets, done) if ok]


def multi_upload(
    client: HDFSClient,
    hdfs_path: str,
    local_path: str,
    multi_processes: int = 5,
    overwrite: bool = False,
    sync: bool = True,
) -> None:
    """Upload every file below the local directory ``local_path`` to ``hdfs_path``, keeping
    relative paths, ``multi_processes`` at a time; ``sync=False`` returns without waiting."""
    if not os.path.isdir(local_path):
        raise ArgumentError("multi_upload", f"local_path must be a directory, given {local_path!r}")
    jobs = []
    for root, _dirs, names in os.walk(local_path):
        for name in sorted(names):
            src = os.path.join(root, name)
            rel = os.path.relpath(src, local_path).replace(os.sep, "/")
            jobs.append((hdfs_path.rstrip("/") + "/" + rel, src))
    pool = ThreadPoolExecutor(_pool_size(multi_processes))
    for dst, src in jobs:
        pool.submit(client.upload, dst, src, overwrite)
    pool.shutdown(wait=bool(sync))
