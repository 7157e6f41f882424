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
from oar_io.errors import CorruptFileError, MissingVariableError, TruncatedFileError
from oar_io.tensor_formats import OarTensorFormat, _read_exact

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
    """Write ``state`` to ``path`` atomically."""
    with atomic_file(path) as f:
        write_dict(f, state)


def load_dict(path: str) -> dict:
    """Read a dict written by :func:`save_dict`, verifying every record."""
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
            magic = f.peek(4)[:4]
            if not magic:
                raise TruncatedFileError(
                    f"file '{path}' is truncated: it holds {i} of {count} entries"
                )
            if magic == JSON_MAGIC:
                first = _read_exact(f, 10, path, None, "entry header")
                _, n = struct.unpack("<HI", first[4:])
                body = _read_exact(f, n + 4, path, None, "entry")
                if zlib.crc32(body[:n]) != struct.unpack("<I", body[n:])[0]:
                    raise CorruptFileError(
                        f"file '{path}': entry {i} fails its checksum; the file is damaged"
                    )
                doc = json.loads(body[:n])
                out[doc["name"]] = doc["value"]
            else:
                name, array, _ = _tensor.read_record(f, path)
                out[name] = array
        if f.read(1):
            raise CorruptFileError(
                f"file '{path}' has data after its {count} entries; the file is damaged"
            )
        return out
