"""Dataset files: where they are cached, how they are fetched and verified.

Files live under ``$OAR_DATA_HOME/<dataset>/`` (default
``~/.cache/oar/dataset``). A file is used only if its md5 matches the
expected one; otherwise it is downloaded (with ``urllib``) unless
``OAR_DATA_OFFLINE=1``. Without network the error says where to put the file.

Downloads are staged: bytes go to ``<name>.<random>.part`` beside the target and are moved
to the final name only once their md5 matches, so the final path never holds a partial or
wrong file. Staging files left by a killed process are removed by the next download of that
file. A download that fails its md5 is kept aside as ``<name>.md5-mismatch`` (for a look),
and so is a cached file whose md5 no longer matches. The whole download (all retries) is
bounded by ``$OAR_DATA_DEADLINE`` seconds (default 600); each network read by 30 s.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ENV_HOME = "OAR_DATA_HOME"
ENV_OFFLINE = "OAR_DATA_OFFLINE"
ENV_DEADLINE = "OAR_DATA_DEADLINE"
RETRIES = 3
TIMEOUT_S = 30
DEADLINE_S = 600.0
CHUNK = 1 << 20


class DatasetError(RuntimeError):
    """A dataset file is missing and cannot be downloaded, or is corrupted."""


def data_home() -> Path:
    """The cache root: ``$OAR_DATA_HOME`` or ``~/.cache/oar/dataset`` (read on every call)."""
    env = os.environ.get(ENV_HOME)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "oar" / "dataset"


def md5file(path: str | Path) -> str:
    h = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _deadline_s() -> float:
    raw = os.environ.get(ENV_DEADLINE, "")
    try:
        return float(raw) if raw else DEADLINE_S
    except ValueError:
        raise DatasetError(f"{ENV_DEADLINE} must be a number of seconds, given {raw!r}") from None


def _clean_stale_parts(dest: Path) -> None:
    """Remove staging files of ``dest`` left by a killed download."""
    if dest.parent.is_dir():
        for part in dest.parent.glob(glob_escape(dest.name) + ".*.part"):
            try:
                part.unlink()
            except OSError:
                pass


def glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _set_aside(path: Path) -> Path:
    aside = path.with_name(path.name + ".md5-mismatch")
    os.replace(path, aside)
    return aside


def _fetch(url: str, dest: Path, md5sum: str, deadline: float) -> None:
    """Download ``url`` to ``dest`` through a staging file; ``dest`` appears only if the md5
    matches (a mismatch is set aside and raises DatasetError)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=dest.name + ".", suffix=".part")
    h = hashlib.md5()
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp:
            while chunk := resp.read(CHUNK):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the download deadline ({_deadline_s():g} s) passed")
                out.write(chunk)
                h.update(chunk)
            out.flush()
            os.fsync(out.fileno())
        got = h.hexdigest()
        if got != md5sum:
            aside = _set_aside(Path(tmp))
            raise DatasetError(
                f"the downloaded file has md5 {got}, expected {md5sum} (kept as {aside})"
            )
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def download(url: str, module_name: str, md5sum: str, save_name: str | None = None) -> str:
    """The local path of ``url``'s file for dataset ``module_name``, downloading it if needed.

    Paddle's ``paddle.dataset.common.download`` contract: the file is cached
    as ``<home>/<module_name>/<save_name or basename(url)>`` and must have
    md5 ``md5sum``.
    """
    dirname = data_home() / module_name
    path = dirname / (save_name or url.split("/")[-1])
    _clean_stale_parts(path)
    if path.exists():
        got = md5file(path)
        if got == md5sum:
            return str(path)
        aside = _set_aside(path)
        bad = f"{path} is corrupted or incomplete: its md5 is {got}, expected {md5sum} (moved aside to {aside})"
    else:
        bad = f"{path} does not exist"
    if os.environ.get(ENV_OFFLINE, "") not in ("", "0"):
        raise DatasetError(
            f"dataset '{module_name}': {bad}, and downloads are off ({ENV_OFFLINE} is set). "
            f"Download {url} and put it at {path} (or point {ENV_HOME} at a folder holding "
            f"{module_name}/{path.name})"
        )
    last: Exception | None = None
    deadline = time.monotonic() + _deadline_s()
    for _ in range(RETRIES):
        if time.monotonic() > deadline:
            last = TimeoutError(f"the download deadline ({_deadline_s():g} s) passed")
            break
        try:
            _fetch(url, path, md5sum, deadline)
            return str(path)
        except (urllib.error.URLError, OSError, TimeoutError, DatasetError) as exc:
            last = exc
    raise DatasetError(
        f"dataset '{module_name}': {bad}, and downloading {url} failed ({last}). "
        f"Download it by hand and put it at {path} (or point {ENV_HOME} at a folder holding "
        f"{module_name}/{path.name})"
    )


DATA_HOME = str(data_home())


def split(reader, line_count: int, suffix: str = "%05d.pickle", dumper=None) -> None:
    """Write the items of ``reader()`` into files of ``line_count`` items each, named
    ``suffix % index`` (a list per file, ``pickle.dump`` by default, binary mode:
    Fluid 1.8.5 opens the files in text mode, which fails on Python 3)."""
    import pickle

    if dumper is None:
        dumper = pickle.dump
    if not callable(reader):
        raise TypeError("split: reader must be a callable returning an iterable")
    if isinstance(line_count, bool) or not isinstance(line_count, int) or line_count <= 0:
        raise ValueError(f"split: line_count must be a positive int, given {line_count!r}")
    lines: list = []
    index = 0
    for item in reader():
        lines.append(item)
        if len(lines) == line_count:
            with open(suffix % index, "wb") as f:
                dumper(lines, f)
            lines, index = [], index + 1
    if lines:
        with open(suffix % index, "wb") as f:
            dumper(lines, f)


def cluster_files_reader(files_pattern: str, trainer_count: int, trainer_id: int, loader=None):
    """A reader over this trainer's share of the files ``split`` wrote (file i goes to
    trainer ``i % trainer_count``, in name order). Files are loaded with ``pickle.load``
    by default: only read files you wrote yourself."""
    import glob
    import pickle

    if loader is None:
        loader = pickle.load

    def reader():
        files = sorted(glob.glob(files_pattern))
        for i, path in enumerate(files):
            if i % trainer_count == trainer_id:
                with open(path, "rb") as f:
                    yield from loader(f)

    return reader


__all__ = [
    "DATA_HOME",
    "DatasetError",
    "cluster_files_reader",
    "data_home",
    "download",
    "md5file",
    "split",
]
