"""The two built-in tensor formats: Fluid's LoDTensor layout and oar's checked layout.

A tensor format writes and reads one *record* (a tensor with its LoD) on a
binary file object. A per-variable file holds one record; a combined file
holds the records of several variables back to back, in name order.

``fluid``: uint32 version 0; uint64 LoD level count, per level a uint64 byte
size and that many uint64 offsets; uint32 tensor version 0; int32 size of a
``TensorDesc`` protobuf (data_type enum, dims); the protobuf; raw
little-endian C-order data. Byte-compatible with PaddlePaddle's save/load ops.

``oar``: magic ``OART``, uint16 version, uint32 header length, a JSON header
(name, dtype, shape, LoD, byte count, checksum of the data: xxh3_64, or crc32
without xxhash), CRC-32 of the header, zero padding to a 64-byte boundary, the raw data. Everything a load
needs to verify is in the record. See ``docs/formats.md``.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from typing import IO, Any

import numpy as np

from oar_io import wire
from oar_io.errors import (
    CorruptFileError,
    MismatchError,
    TruncatedFileError,
    at,
)

FLUID_DTYPES = {
    0: "bool",
    1: "int16",
    2: "int32",
    3: "int64",
    4: "float16",
    5: "float32",
    6: "float64",
    20: "uint8",
    21: "int8",
}
FLUID_DTYPE_CODES = {v: k for k, v in FLUID_DTYPES.items()}
try:  # xxh3 verifies at ~10 GB/s; zlib's CRC-32 (~2 GB/s) is the fallback and stays readable
    import xxhash as _xxhash
except ImportError:  # pragma: no cover - exercised where xxhash is not installed
    _xxhash = None  # type: ignore[assignment,unused-ignore]
_CHUNK = 1 << 26  # 64 MiB per write/read call keeps peak syscalls large and memory flat


def _contiguous_le(array: Any) -> np.ndarray:
    a = np.asarray(array)
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and np.little_endian is False):
        a = a.astype(a.dtype.newbyteorder("<"))
    return np.ascontiguousarray(a)


def _bytes_view(a: np.ndarray) -> memoryview:
    return a.reshape(-1).view(np.uint8).data if a.size else memoryview(b"")


def checksum(mv: memoryview, algo: str | None = None) -> tuple:
    """``(algorithm, digest)`` of ``mv``: xxh3_64 when xxhash is installed, else crc32."""
    algo = algo or ("xxh3_64" if _xxhash is not None else "crc32")
    if algo == "xxh3_64":
        if _xxhash is None:
            raise CorruptFileError(
                "this file's data checksum is xxh3_64, which needs the xxhash package: "
                "pip install xxhash"
            )
        return algo, _xxhash.xxh3_64_intdigest(mv)
    if algo == "crc32":
        return algo, zlib.crc32(mv)
    raise CorruptFileError(f"unknown checksum algorithm {algo!r}")


def _write_all(f: IO[bytes], mv: memoryview) -> None:
    for start in range(0, len(mv), _CHUNK):
        part = mv[start : start + _CHUNK]
        while len(part):
            n = f.write(part)
            if n is None:  # buffered writers write everything
                break
            part = part[n:]


SAFE_DTYPES = frozenset(
    [
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ]
)
MAX_NDIM = 32


def remaining(f: IO[bytes]) -> int | None:
    """Bytes left in ``f`` from its position (None when it cannot tell, e.g. a pipe)."""
    try:
        return os.fstat(f.fileno()).st_size - f.tell()
    except (OSError, AttributeError, ValueError):
        pass
    try:  # in-memory or wrapped streams: measure by seeking
        pos = f.tell()
        end = f.seek(0, os.SEEK_END)
        f.seek(pos)
        return end - pos
    except (OSError, AttributeError, ValueError):
        return None


def check_size(f: IO[bytes], nbytes: int, path: str, name: str | None, what: str) -> None:
    """Refuse to allocate ``nbytes`` for data the file cannot hold (checked before np.empty)."""
    left = remaining(f)
    if left is not None and nbytes > left:
        raise TruncatedFileError(
            f"{at(path, name)}: the {what} declares {nbytes} bytes but the file holds only "
            f"{left} more; it is truncated or damaged"
        )


def _read_exact(f: IO[bytes], n: int, path: str, name: str | None, what: str) -> bytes:
    data = f.read(n)
    if len(data) != n:
        raise TruncatedFileError(
            f"{at(path, name)} is truncated: it ends inside the {what} "
            f"(wanted {n} bytes, found {len(data)})"
        )
    return data


def _read_into(f: IO[bytes], a: np.ndarray, path: str, name: str | None) -> None:
    mv = _bytes_view(a)
    got = 0
    while got < len(mv):
        n = f.readinto(mv[got : got + _CHUNK])  # type: ignore[attr-defined]  # a binary file
        if not n:
            raise TruncatedFileError(
                f"{at(path, name)} is truncated: the data has {got} of {len(mv)} bytes"
            )
        got += n


def _check_lod(lod: list, rows: int, path: str, name: str | None) -> None:
    for i, lvl in enumerate(lod):
        if not lvl or lvl[0] != 0 or any(b < a for a, b in zip(lvl, lvl[1:])):
            raise CorruptFileError(
                f"{at(path, name)}: LoD level {i} is not non-decreasing offsets from 0"
            )
    if lod and lod[-1][-1] != rows:
        raise CorruptFileError(
            f"{at(path, name)}: the last LoD level ends at {lod[-1][-1]} but the "
            f"tensor has {rows} rows"
        )


def _check_shape(f: IO[bytes], shape: tuple, dtype: np.dtype, path: str, name: str | None) -> None:
    """Dims non-negative, not too many, and their data present in the file: before allocating."""
    if len(shape) > MAX_NDIM or any(d < 0 for d in shape):
        raise CorruptFileError(
            f"{at(path, name)}: shape {list(shape[: MAX_NDIM + 1])} is not a valid tensor shape"
        )
    nbytes = 1
    for d in shape:
        nbytes *= d  # Python ints: a crafted shape cannot overflow into a small number
    check_size(f, nbytes * dtype.itemsize, path, name, f"tensor of shape {list(shape)}")


def _header(raw: bytes, path: str, name: str | None) -> dict:
    """The JSON header of an oar record, every field's type checked."""
    try:
        h = json.loads(raw)
    except (ValueError, RecursionError):
        raise CorruptFileError(f"{at(path, name)}: the record header is not JSON") from None
    ok = (
        isinstance(h, dict)
        and isinstance(h.get("name"), str)
        and isinstance(h.get("dtype"), str)
        and h["dtype"] in SAFE_DTYPES
        and isinstance(h.get("shape"), list)
        and all(type(d) is int for d in h["shape"])
        and isinstance(h.get("lod"), list)
        and all(isinstance(lvl, list) and all(type(x) is int for x in lvl) for lvl in h["lod"])
        and type(h.get("nbytes")) is int
        and isinstance(h.get("checksum"), list)
        and len(h["checksum"]) == 2
        and h["checksum"][0] in ("xxh3_64", "crc32")
        and type(h["checksum"][1]) is int
    )
    if not ok:
        raise CorruptFileError(
            f"{at(path, name)}: the record header lacks or mistypes a field (name, dtype of "
            f"{sorted(SAFE_DTYPES)}, shape, lod, nbytes, checksum)"
        )
    return h


class FluidTensorFormat:
    """Fluid's binary LoDTensor layout (no checksum): files PaddlePaddle reads and writes."""

    name = "fluid"
    kind = "tensor"
    checked = False

    def sniff(self, head: bytes) -> bool:
        return len(head) >= 4 and head[:4] == b"\0\0\0\0"

    def write(self, f: IO[bytes], name: str, array: Any, lod: list | None = None) -> None:
        a = _contiguous_le(array)
        if a.dtype.name not in FLUID_DTYPE_CODES:
            raise TypeError(f"variable '{name}': dtype {a.dtype} has no Fluid tensor type")
        lod = lod or []
        parts = [struct.pack("<IQ", 0, len(lod))]
        for lvl in lod:
            offs = np.asarray(lvl, dtype="<u8")
            parts.append(struct.pack("<Q", offs.nbytes))
            parts.append(offs.tobytes())
        desc = wire.f_varint(1, FLUID_DTYPE_CODES[a.dtype.name]) + b"".join(
            wire.f_varint(2, d) for d in a.shape
        )
        parts.append(struct.pack("<Ii", 0, len(desc)))
        parts.append(desc)
        f.write(b"".join(parts))
        _write_all(f, _bytes_view(a))

    def read(self, f: IO[bytes], path: str, name: str | None = None) -> tuple:
        version, nlevels = struct.unpack("<IQ", _read_exact(f, 12, path, name, "LoD header"))
        if version != 0:
            raise CorruptFileError(
                f"{at(path, name)}: LoDTensor version {version} is not supported "
                f"(Fluid writes 0); is this a Fluid tensor file?"
            )
        if nlevels > 64:
            raise CorruptFileError(
                f"{at(path, name)}: {nlevels} LoD levels is not plausible; the file is damaged"
            )
        lod = []
        for i in range(nlevels):
            (size,) = struct.unpack("<Q", _read_exact(f, 8, path, name, f"LoD level {i} size"))
            if size % 8 or size > 1 << 40:
                raise CorruptFileError(
                    f"{at(path, name)}: LoD level {i} has a bad byte size {size}"
                )
            check_size(f, size, path, name, f"LoD level {i}")
            raw = _read_exact(f, size, path, name, f"LoD level {i}")
            lod.append(np.frombuffer(raw, dtype="<u8").astype(np.int64).tolist())
        tversion, desc_size = struct.unpack("<Ii", _read_exact(f, 8, path, name, "tensor header"))
        if tversion != 0:
            raise CorruptFileError(
                f"{at(path, name)}: tensor version {tversion} is not supported (Fluid writes 0)"
            )
        if not 0 < desc_size < 1 << 20:
            raise CorruptFileError(
                f"{at(path, name)}: TensorDesc size {desc_size} is not plausible"
            )
        check_size(f, desc_size, path, name, "TensorDesc")
        try:
            desc = wire.parse(_read_exact(f, desc_size, path, name, "TensorDesc"))
            code = wire.integer(desc, 1, -1)
            shape = tuple(wire.ints(desc, 2))
        except wire.WireError as exc:
            raise CorruptFileError(
                f"{at(path, name)}: the TensorDesc does not parse: {exc}"
            ) from None
        if code not in FLUID_DTYPES:
            raise CorruptFileError(f"{at(path, name)}: unknown Fluid data type code {code}")
        dtype = np.dtype(FLUID_DTYPES[code]).newbyteorder("<")
        _check_shape(f, shape, dtype, path, name)
        a = np.empty(shape, dtype=dtype)
        _read_into(f, a, path, name)
        _check_lod(lod, shape[0] if shape else 1, path, name)
        return a.astype(a.dtype.newbyteorder("=")) if not np.little_endian else a, lod


OAR_MAGIC = b"OART"
OAR_VERSION = 1
_ALIGN = 64


class OarTensorFormat:
    """oar's checked layout: every record carries its name, dtype, shape and checksums."""

    name = "oar"
    kind = "tensor"
    checked = True

    def sniff(self, head: bytes) -> bool:
        return head[:4] == OAR_MAGIC

    def write(self, f: IO[bytes], name: str, array: Any, lod: list | None = None) -> None:
        a = _contiguous_le(array)
        mv = _bytes_view(a)
        header = json.dumps(
            {
                "name": name,
                "dtype": a.dtype.name,
                "shape": list(a.shape),
                "lod": [list(map(int, lvl)) for lvl in (lod or [])],
                "nbytes": len(mv),
                "checksum": list(checksum(mv)),
            },
            separators=(",", ":"),
        ).encode("utf-8")
        head = (
            OAR_MAGIC
            + struct.pack("<HI", OAR_VERSION, len(header))
            + header
            + struct.pack("<I", zlib.crc32(header))
        )
        pad = (-len(head)) % _ALIGN
        f.write(head + b"\0" * pad)
        _write_all(f, mv)

    def read(self, f: IO[bytes], path: str, name: str | None = None) -> tuple:
        _, array, lod = self.read_record(f, path, name)
        return array, lod

    def read_record(self, f: IO[bytes], path: str, name: str | None = None) -> tuple:
        """``(name, array, lod)`` of the next record, every field verified."""
        first = _read_exact(f, 10, path, name, "record header")
        if first[:4] != OAR_MAGIC:
            raise CorruptFileError(
                f"{at(path, name)}: bad magic {first[:4]!r} (an oar tensor record "
                f"starts with {OAR_MAGIC!r})"
            )
        version, hlen = struct.unpack("<HI", first[4:])
        if version != OAR_VERSION:
            raise CorruptFileError(
                f"{at(path, name)}: oar tensor format version {version} is not "
                f"supported (this oar-io reads {OAR_VERSION})"
            )
        if hlen > 1 << 24:
            raise CorruptFileError(f"{at(path, name)}: header length {hlen} is not plausible")
        check_size(f, hlen + 4, path, name, "record header")
        header = _read_exact(f, hlen + 4, path, name, "record header")
        (hcrc,) = struct.unpack("<I", header[hlen:])
        header = header[:hlen]
        if zlib.crc32(header) != hcrc:
            raise CorruptFileError(
                f"{at(path, name)}: the record header fails its checksum; the file is damaged"
            )
        h = _header(header, path, name)
        pad = (-(10 + hlen + 4)) % _ALIGN
        _read_exact(f, pad, path, name, "padding")
        if name is not None and h["name"] != name:
            raise MismatchError(
                f"{at(path, name)}: the record holds variable '{h['name']}' instead "
                f"(the file was saved for a different variable list)"
            )
        dtype = np.dtype(h["dtype"]).newbyteorder("<")
        shape = tuple(h["shape"])
        if int(np.prod(shape, dtype=object)) * dtype.itemsize != h["nbytes"]:
            raise CorruptFileError(
                f"{at(path, h['name'])}: shape {list(shape)} of {h['dtype']} does not "
                f"make {h['nbytes']} bytes"
            )
        _check_shape(f, shape, dtype, path, h["name"])
        a = np.empty(shape, dtype=dtype)
        _read_into(f, a, path, h["name"])
        algo, digest = h["checksum"]
        try:
            got = checksum(_bytes_view(a), algo)[1]
        except CorruptFileError as exc:
            raise CorruptFileError(f"{at(path, h['name'])}: {exc}") from None
        if got != digest:
            raise CorruptFileError(
                f"{at(path, h['name'])}: the data fails its {algo} checksum; the file is damaged"
            )
        lod = [list(lvl) for lvl in h["lod"]]
        _check_lod(lod, shape[0] if shape else 1, path, h["name"])
        return h["name"], (a if np.little_endian else a.astype(a.dtype.newbyteorder("="))), lod

    def read_name(self, head: bytes) -> str | None:
        """The variable name in a record header (for listing a combined file)."""
        if head[:4] != OAR_MAGIC or len(head) < 10:
            return None
        _, hlen = struct.unpack("<HI", head[4:10])
        try:
            return json.loads(head[10 : 10 + hlen])["name"]
        except (ValueError, KeyError):
            return None
