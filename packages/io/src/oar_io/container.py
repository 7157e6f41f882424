"""A checked, code-free container for ``name -> value`` dicts (``.pdparams`` / ``.pdopt`` files).

Layout: magic ``OARD``, uint16 version, uint32 entry count, then one record
per entry: an oar tensor record (arrays and objects with ``.numpy()``) or a
JSON record (magic ``OARJ``, uint16 version, uint32 length, ``{"name",
"value"}`` JSON, CRC-32) for plain values such as ``LR_Scheduler``'s dict.
Nothing is unpickled, so loading a file never runs code.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import IO, Any

import numpy as np

from oar_io.atomic import atomic_file
from oar_io.errors import (
    CorruptFileError,
    LimitExceededError,
    MissingVariableError,
    TruncatedFileError,
)
from oar_io.tensor_formats import OarTensorFormat, _read_exact, check_size

MAGIC, JSON_MAGIC, VERSION = b"OARD", b"OARJ", 1
_tensor = OarTensorFormat()


def _plain(value: Any, key: str) -> Any:
    """A JSON-able copy of a non-tensor value; refuses anything that is not plain data."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v, key) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v, key) for k, v in value.items()}
    if hasattr(value, "numpy"):
        return np.asarray(value.numpy()).tolist()
    raise TypeError(
        f"cannot save entry '{key}': {type(value).__name__} is neither a tensor nor plain data "
        f"(numbers, strings, lists, dicts)"
    )


def as_array(value: Any) -> np.ndarray | None:
    """The array behind a tensor-like value (ndarray, VarBase/ParamBase, LoDTensor), else None."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "numpy") and callable(value.numpy):
        return np.asarray(value.numpy())
    if hasattr(value, "__array__") and not isinstance(
        value, (list, tuple, dict, str, int, float, bool)
    ):
        return np.asarray(value)
    return None


def write_dict(f: IO[bytes], state: dict) -> None:
    f.write(MAGIC + struct.pack("<HI", VERSION, len(state)))
    for key, value in state.items():
        if not isinstance(key, str):
            raise TypeError(f"state dict keys must be str, given {key!r}")
        arr = as_array(value)
        if arr is not None:
            _tensor.write(f, key, arr, [])
            continue
        doc = json.dumps({"name": key, "value": _plain(value, key)}).encode("utf-8")
        f.write(
            JSON_MAGIC
            + struct.pack("<HI", VERSION, len(doc))
            + doc
            + struct.pack("<I", zlib.crc32(doc))
        )


def save_dict(path: str, state: dict) -> None:
    """Write ``state`` to ``path`` atomically (a single file; checkpoints use PrefixTransaction)."""
    with atomic_file(path) as f:
        write_dict(f, state)


MAX_JSON_DEPTH = 64


def json_depth(data: bytes) -> int:
    """How deeply ``[``/``{`` nest in JSON ``data`` (strings skipped), without recursing."""
    import re

    stripped = re.sub(rb'"(?:[^"\\]|\\.)*"', b"", data)
    a = np.frombuffer(stripped, dtype=np.uint8)
    step = np.isin(a, (0x5B, 0x7B)).astype(np.int32) - np.isin(a, (0x5D, 0x7D)).astype(np.int32)
    return int(np.cumsum(step).max(initial=0))


def loads_json(data: bytes, path: str, what: str) -> Any:
    """JSON from an untrusted file: nesting bounded, every failure a CorruptFileError."""
    if json_depth(data) > MAX_JSON_DEPTH:
        raise LimitExceededError(
            f"file '{path}': the {what} nests deeper than {MAX_JSON_DEPTH} levels; the file is "
            f"damaged or crafted"
        )
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise CorruptFileError(f"file '{path}': the {what} is not valid JSON: {exc}") from None


def _json_entry(body: bytes, path: str, i: int) -> tuple:
    doc = loads_json(body, path, f"entry {i}")
    if not isinstance(doc, dict) or not isinstance(doc.get("name"), str) or "value" not in doc:
        raise CorruptFileError(f"file '{path}': entry {i} is not a {{name, value}} record")
    return doc["name"], doc["value"]


def load_dict(path: str, f: IO[bytes] | None = None) -> dict:
    """Read a dict written by :func:`save_dict` (from ``f`` when given), verifying every record."""
    if f is None:
        try:
            f = open(path, "rb")
        except FileNotFoundError:
            raise MissingVariableError(f"file '{path}' not found") from None
    with f:
        head = f.read(10)
        if len(head) < 10 or head[:4] != MAGIC:
            if head[:2] == b"\x80\x02" or head[:1] == b"\x80":
                raise CorruptFileError(
                    f"file '{path}' is a Python pickle (PaddlePaddle's own .pdparams); "
                    f"oar never unpickles files, since that can run arbitrary code"
                )
            raise CorruptFileError(
                f"file '{path}' is not an oar state file (bad magic {head[:4]!r})"
            )
        version, count = struct.unpack("<HI", head[4:])
        if version != VERSION:
            raise CorruptFileError(f"file '{path}': state file version {version} is not supported")
        out: dict = {}
        for i in range(count):
            magic = f.peek(4)[:4]  # type: ignore[attr-defined]  # a buffered reader
            if not magic:
                raise TruncatedFileError(
                    f"file '{path}' is truncated: it holds {i} of {count} entries"
                )
            if magic == JSON_MAGIC:
                first = _read_exact(f, 10, path, None, "entry header")
                _, n = struct.unpack("<HI", first[4:])
                check_size(f, n + 4, path, None, f"entry {i}")
                body = _read_exact(f, n + 4, path, None, "entry")
                if zlib.crc32(body[:n]) != struct.unpack("<I", body[n:])[0]:
                    raise CorruptFileError(
                        f"file '{path}': entry {i} fails its checksum; the file is damaged"
                    )
                name, value = _json_entry(body[:n], path, i)
            else:
                name, value, _ = _tensor.read_record(f, path)
            if name in out:
                raise CorruptFileError(f"file '{path}' holds entry '{name[:200]}' twice")
            out[name] = value
        if f.read(1):
            raise CorruptFileError(
                f"file '{path}' has data after its {count} entries; the file is damaged"
            )
        return out
