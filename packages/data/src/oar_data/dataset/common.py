"""Dataset files: where they are cached, how they are fetched and verified.

Files live under ``$OAR_DATA_HOME/<dataset>/`` (default
``~/.cache/oar/dataset``). A file is used only if its md5 matches the
expected one; otherwise it is downloaded (with ``urllib``) unless
``OAR_DATA_OFFLINE=1``. Without network the error says where to put the file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

ENV_HOME = "OAR_DATA_HOME"
ENV_OFFLINE = "OAR_DATA_OFFLINE"
RETRIES = 3
TIMEOUT_S = 30


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


def _fetch(url: str, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=dest.name + ".", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp:
            shutil.copyfileobj(resp, out, 1 << 20)
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
    if path.exists():
        got = md5file(path)
        if got == md5sum:
            return str(path)
        bad = f"{path} is corrupted or incomplete: its md5 is {got}, expected {md5sum}"
    else:
        bad = f"{path} does not exist"
    if os.environ.get(ENV_OFFLINE, "") not in ("", "0"):
        raise DatasetError(
            f"dataset '{module_name}': {bad}, and downloads are off ({ENV_OFFLINE} is set). "
            f"Download {url} and put it at {path} (or point {ENV_HOME} at a folder holding "
            f"{module_name}/{path.name})"
        )
    last = None
    for _ in range(RETRIES):
        try:
            _fetch(url, path)
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            last = exc
            continue
        got = md5file(path)
        if got == md5sum:
            return str(path)
        last = DatasetError(f"the downloaded file has md5 {got}, expected {md5sum}")
    raise DatasetError(
        f"dataset '{module_name}': {bad}, and downloading {url} failed ({last}). "
        f"Download it by hand and put it at {path} (or point {ENV_HOME} at a folder holding "
        f"{module_name}/{path.name})"
    )


DATA_HOME = str(data_home())

__all__ = ["DATA_HOME", "DatasetError", "data_home", "download", "md5file"]
