"""The parameter-server wire format: a small typed header frame, then raw tensor frames.

A message is a list of ZeroMQ frames::

    [header, payload_0, payload_1, ...]

The header is ``HEAD`` (magic ``OARP``, version, kind, status, trainer id,
sequence number, an auxiliary integer, the entry count), then per entry
``ENTRY`` (name length, dtype code, ndim, sparse flag, height) followed by its
dims, its row count when sparse, and its UTF-8 name. A sparse entry of height ``KEYED`` (-1)
carries ids of a hashed distributed table as its rows (any int64); other sparse rows must lie
in ``[0, height)``. Each dense entry owns one
payload frame (the C-contiguous bytes); a sparse entry (SelectedRows) owns
two: the int64 row ids, then the values. An error reply carries its text as
the single payload frame.

Nothing is unpickled: every field is a fixed-size integer, every frame length
is checked against what the header declares, and the limits below bound what
a peer can make the receiver allocate (ZeroMQ's ``MAXMSGSIZE`` bounds each
frame before it is read).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from oar.api import SelectedRows

MAGIC = b"OARP"
VERSION = 1
HEAD = struct.Struct("<4sBBBxiIqI")  # magic, version, kind, status, trainer, seq, aux, entries
ENTRY = struct.Struct("<HBBBxq")  # name length, dtype code, ndim, sparse, height
MAX_ENTRIES = 4096
MAX_NAME = 512
MAX_NDIM = 9
MAX_HEADER = 1 << 20
# the height of a SelectedRows whose rows are ids of a hashed table (any int64), not row numbers
KEYED = -1

# message kinds
HELLO, CHALLENGE, PROOF, WELCOME = 1, 2, 3, 4
SEND, BARRIER, GET, FETCH_BARRIER, PREFETCH, COMPLETE, SAVE = 10, 11, 12, 13, 14, 15, 16
REPLY, ERROR = 20, 21
KIND_NAMES = {
    HELLO: "hello",
    CHALLENGE: "challenge",
    PROOF: "proof",
    WELCOME: "welcome",
    SEND: "send",
    BARRIER: "send_barrier",
    GET: "get",
    FETCH_BARRIER: "fetch_barrier",
    PREFETCH: "prefetch",
    COMPLETE: "complete",
    SAVE: "save",
    REPLY: "reply",
    ERROR: "error",
}

DTYPES = ("float32", "float64", "int32", "int64", "float16", "bool", "uint8", "int8", "int16")
_CODE = {np.dtype(d): i for i, d in enumerate(DTYPES)}


class WireError(ValueError):
    """A message that does not follow the wire format (the receiver refuses it, and goes on)."""


class Message(NamedTuple):
    kind: int
    trainer: int = 0
    seq: int = 0
    aux: int = 0
    tensors: tuple = ()  # ((name, ndarray | SelectedRows), ...)
    status: int = 0
    text: str = ""

    def names(self) -> list:
        return [n for n, _ in self.tensors]


def _contiguous(a: Any) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype not in _CODE:
        raise WireError(f"dtype {a.dtype} cannot be sent to a pserver (supported: {DTYPES})")
    return np.ascontiguousarray(a)


def encode(msg: Message) -> list:
    """The frames of ``msg`` (payloads are views of the arrays: no copy here)."""
    if len(msg.tensors) > MAX_ENTRIES:
        raise WireError(f"{len(msg.tensors)} tensors in one message (at most {MAX_ENTRIES})")
    parts = [
        HEAD.pack(
            MAGIC, VERSION, msg.kind, msg.status, msg.trainer, msg.seq, msg.aux, len(msg.tensors)
        )
    ]
    payload: list = []
    for name, value in msg.tensors:
        raw = name.encode()
        if len(raw) > MAX_NAME:
            raise WireError(
                f"variable name of {len(raw)} bytes (at most {MAX_NAME}): {name[:60]}..."
            )
        sparse = isinstance(value, SelectedRows)
        arr = _contiguous(value.value if sparse else value)
        if arr.ndim > MAX_NDIM:
            raise WireError(f"'{name}' has {arr.ndim} dims (at most {MAX_NDIM})")
        height = value.height() if sparse else 0
        parts.append(ENTRY.pack(len(raw), _CODE[arr.dtype], arr.ndim, int(sparse), height))
        parts.append(struct.pack(f"<{arr.ndim}q", *arr.shape))
        if sparse:
            rows = np.ascontiguousarray(value.row_array, dtype=np.int64)
            parts.append(struct.pack("<q", rows.size))
            payload.append(rows)
        parts.append(raw)
        payload.append(arr)
    if msg.kind == ERROR:
        payload.append(msg.text.encode())
    return [b"".join(parts)] + [_frame(p) for p in payload]


def _frame(p: Any) -> Any:
    """A payload frame without a copy (an empty array is an empty frame)."""
    if not isinstance(p, np.ndarray):
        return p
    return memoryview(p).cast("B") if p.size else b""


def _buf(frame: Any) -> memoryview:
    return frame.buffer if hasattr(frame, "buffer") else memoryview(frame)


def _take(view: memoryview, at: int, st: struct.Struct) -> tuple:
    if at + st.size > len(view):
        raise WireError(f"header ends at byte {len(view)} inside a field at byte {at}")
    return st.unpack_from(view, at), at + st.size


def _dims(view: memoryview, at: int, n: int) -> tuple:
    st = struct.Struct(f"<{n}q")
    dims, at = _take(view, at, st)
    if any(d < 0 for d in dims):
        raise WireError(f"negative dimension in {dims}")
    return dims, at


def _array(frame: Any, dtype: np.dtype, shape: Sequence, what: str, copy: bool) -> np.ndarray:
    view = _buf(frame)
    expect = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if view.nbytes != expect:
        raise WireError(
            f"'{what}': the header declares {dtype} {tuple(shape)} ({expect} bytes) but the "
            f"frame holds {view.nbytes} bytes"
        )
    arr = np.frombuffer(view, dtype=dtype).reshape(shape)
    return arr.copy() if copy else arr


def _check_head(head: Any) -> tuple:
    if len(head) > MAX_HEADER:
        raise WireError(f"header of {len(head)} bytes (at most {MAX_HEADER})")
    fields, at = _take(head, 0, HEAD)
    magic, version, kind, _status, _trainer, _seq, _aux, count = fields
    if magic != MAGIC:
        raise WireError(f"bad magic {bytes(magic)!r} (expected {MAGIC!r}): not an oar pserver peer")
    if version != VERSION:
        raise WireError(f"wire version {version}, this process speaks {VERSION}")
    if kind not in KIND_NAMES:
        raise WireError(f"unknown message kind {kind}")
    if count > MAX_ENTRIES:
        raise WireError(f"{count} entries (at most {MAX_ENTRIES})")
    return fields, at


def _entry_head(head: Any, at: int) -> tuple:
    """One entry's header fields: ``(name, code, dims, sparse, height, nrows), at``."""
    (nlen, code, ndim, sparse, height), at = _take(head, at, ENTRY)
    if code >= len(DTYPES) or ndim > MAX_NDIM or nlen > MAX_NAME or sparse > 1:
        raise WireError(f"bad entry (dtype code {code}, ndim {ndim}, name length {nlen})")
    dims, at = _dims(head, at, ndim)
    nrows = None
    if sparse:
        (nrows,), at = _take(head, at, struct.Struct("<q"))
    if at + nlen > len(head):
        raise WireError("header ends inside a variable name")
    try:
        name = bytes(head[at : at + nlen]).decode()
    except UnicodeDecodeError:
        raise WireError("variable name is not UTF-8") from None
    return (name, code, dims, sparse, height, nrows), at + nlen


def _sparse(frames: Sequence, fi: int, entry: tuple, copy: bool) -> SelectedRows:
    name, code, dims, _, height, nrows = entry
    if nrows is None or nrows < 0 or height < KEYED:
        raise WireError(f"'{name}': bad sparse rows/height")
    rows = _array(frames[fi], np.dtype(np.int64), (nrows,), name + " rows", True)
    value = _array(frames[fi + 1], np.dtype(DTYPES[code]), dims, name, copy)
    if dims and dims[0] != nrows:
        raise WireError(f"'{name}': {nrows} rows but values of shape {dims}")
    if height != KEYED and rows.size and (rows.min() < 0 or rows.max() >= max(height, 1)):
        raise WireError(f"'{name}': row ids outside [0, {height})")
    return SelectedRows(rows, height, value)


def decode(frames: Sequence, copy: bool = True) -> Message:
    """Parse and check frames into a :class:`Message`; :class:`WireError` when malformed.

    ``copy=False`` leaves the arrays as read-only views of the frames."""
    if not frames:
        raise WireError("empty message")
    head = _buf(frames[0])
    (_, _, kind, status, trainer, seq, aux, count), at = _check_head(head)
    tensors = []
    fi = 1
    for _ in range(count):
        entry, at = _entry_head(head, at)
        name, code, dims, sparse = entry[:4]
        need = fi + (2 if sparse else 1)
        if need > len(frames):
            raise WireError(f"'{name}': {len(frames)} frames, the header needs at least {need}")
        if sparse:
            tensors.append((name, _sparse(frames, fi, entry, copy)))
        else:
            tensors.append((name, _array(frames[fi], np.dtype(DTYPES[code]), dims, name, copy)))
        fi = need
    if at != len(head):
        raise WireError(f"{len(head) - at} stray bytes after the header's entries")
    text = ""
    if kind == ERROR:
        if fi >= len(frames):
            raise WireError("error message without its text frame")
        text = bytes(_buf(frames[fi])).decode("utf-8", "replace")
        fi += 1
    if fi != len(frames):
        raise WireError(f"{len(frames) - fi} frames more than the header declares")
    return Message(kind, trainer, seq, aux, tuple(tensors), status, text)
