"""Checkpoint manifests: which files make up one save, with their sizes and checksums.

A directory save writes ``.oar-manifest.json`` inside the directory; a
``fluid.save`` / ``save_dygraph`` prefix writes ``<prefix>.pdsave`` (JSON)
beside its parts. The manifest is written last and read first: a load checks
every file it reads against it, so files of two different saves are never
combined, and files in layouts without checksums (Fluid's) get one. Files
written without a manifest (by Fluid, or by an older oar) load as before.

Layout (JSON): ``{"format": "oar.manifest", "version": 1, "save_id": str,
"files": {relname: {"size": int, "checksum": [algo, int]}}}``.
"""

from __future__ import annotations

import os
import secrets
import zlib
from typing import IO, Any

from oar_io.errors import CorruptFileError

FORMAT, VERSION = "oar.manifest", 1
DIR_MANIFEST = ".oar-manifest.json"
PREFIX_MANIFEST = ".pdsave"  # appended to a fluid.save prefix: sorts after .pdopt/.pdparams
MAX_MANIFEST_BYTES = 64 << 20
_CHUNK = 1 << 22

try:
    import xxhash as _xxhash
except ImportError:  # pragma: no cover - exercised where xxhash is not installed
    _xxhash = None  # type: ignore[assignment,unused-ignore]


def new_save_id() -> str:
    """A save id that also names the saving process (``pid-random``) for debris cleanup."""
    return f"{os.getpid()}-{secrets.token_hex(6)}"


class _Crc32:
    def __init__(self) -> None:
        self.value = 0

    def update(self, data: Any) -> None:
        self.value = zlib.crc32(data, self.value)

    def intdigest(self) -> int:
        return self.value


def hasher(algo: str | None = None) -> tuple:
    """``(algo, incremental hasher with update/intdigest)``: xxh3_64 when available, else crc32."""
    algo = algo or ("xxh3_64" if _xxhash is not None else "crc32")
    if algo == "xxh3_64":
        if _xxhash is None:
            raise CorruptFileError(
                "this checkpoint's manifest uses xxh3_64 checksums, which need the xxhash "
                "package: pip install xxhash"
            )
        return algo, _xxhash.xxh3_64()
    if algo == "crc32":
        return algo, _Crc32()
    raise CorruptFileError(f"unknown manifest checksum algorithm {algo!r}")


class HashingWriter:
    """A binary file wrapper that checksums and counts everything written through it."""

    def __init__(self, f: IO[bytes]) -> None:
        self._f = f
        self.algo, self._h = hasher()
        self.size = 0

    def write(self, data: Any) -> int:
        mv = memoryview(data)
        self._h.update(mv)
        self.size += mv.nbytes
        n = self._f.write(data)
        return mv.nbytes if n is None else n

    def entry(self) -> dict:
        return {"size": self.size, "checksum": [self.algo, self._h.intdigest()]}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)


def file_entry(f: IO[bytes]) -> dict:
    """``{"size", "checksum"}`` of an open file, read from its start (position left at 0)."""
    algo, h = hasher()
    f.seek(0)
    size = 0
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        h.update(chunk)
        size += len(chunk)
    f.seek(0)
    return {"size": size, "checksum": [algo, h.intdigest()]}


def matches(f: IO[bytes], entry: dict) -> bool:
    """Whether the open file ``f`` has the size and checksum ``entry`` records (position 0 after)."""
    try:
        if os.fstat(f.fileno()).st_size != entry["size"]:
            return False
    except (OSError, AttributeError):
        pass
    algo, h = hasher(entry["checksum"][0])
    f.seek(0)
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        h.update(chunk)
    f.seek(0)
    return h.intdigest() == entry["checksum"][1]


def dumps(save_id: str, files: dict) -> bytes:
    import json

    doc = {"format": FORMAT, "version": VERSION, "save_id": save_id, "files": files}
    return json.dumps(doc, indent=1, sort_keys=True).encode("utf-8")


def loads(data: bytes, path: str) -> dict:
    """A manifest's ``{"save_id", "files"}``, every field checked."""
    from oar_io.container import loads_json

    doc = loads_json(data, path, "manifest")
    ok = (
        isinstance(doc, dict)
        and doc.get("format") == FORMAT
        and isinstance(doc.get("save_id"), str)
        and isinstance(doc.get("files"), dict)
    )
    if ok:
        for rel, e in doc["files"].items():
            ok = ok and (
                isinstance(rel, str)
                and isinstance(e, dict)
                and type(e.get("size")) is int
                and isinstance(e.get("checksum"), list)
                and len(e["checksum"]) == 2
                and isinstance(e["checksum"][0], str)
                and type(e["checksum"][1]) is int
            )
    if not ok:
        raise CorruptFileError(f"file '{path}' is not an oar checkpoint manifest")
    if doc.get("version") != VERSION:
        raise CorruptFileError(
            f"file '{path}': manifest version {doc.get('version')!r} is not supported "
            f"(this oar-io reads {VERSION})"
        )
    return doc


def read_fd(fd: int, path: str) -> dict:
    """Read and check a manifest from an open descriptor (closed afterwards)."""
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise CorruptFileError(f"file '{path}' is larger than a manifest can be")
    return loads(data, path)


def read(path: str) -> dict | None:
    """The manifest at ``path``, or None when there is none."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    return read_fd(fd, path)
