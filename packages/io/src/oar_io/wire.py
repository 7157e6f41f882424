"""A minimal protobuf wire-format reader and writer (proto2 scalars, strings, sub-messages).

Enough to read and write Fluid's ``TensorDesc`` and ``ProgramDesc`` without a
generated module: messages are parsed into ``{field number: [values]}`` and
the schema lives in :mod:`oar_io.program_desc` as plain field numbers.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

VARINT, I64, LEN, I32 = 0, 1, 2, 5
MAX_FIELDS = 1 << 22  # fields of one message parsed whole (a VarDesc, an OpDesc, an attribute)


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


def read_varint(buf: bytes | memoryview, pos: int) -> tuple:
    try:
        b = buf[pos]
    except IndexError:
        raise WireError("truncated varint") from None
    if b < 0x80:  # one-byte varints are most of a real file
        return b, pos + 1
    result, shift, pos = b & 0x7F, 7, pos + 1
    n = len(buf)
    while True:
        if pos >= n:
            raise WireError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise WireError("varint too long")


def iter_fields(buf: bytes | memoryview) -> Iterator[tuple]:
    """``(field, wire type, value)`` one at a time: ints for varint/fixed, memoryviews for LEN.

    Nothing is collected, so a loader walking a repeated field of a large message
    holds one element at a time.
    """
    buf = memoryview(buf)
    pos, n = 0, len(buf)
    while pos < n:
        key, pos = read_varint(buf, pos)
        field, wt = key >> 3, key & 7
        if field == 0:
            raise WireError("field number 0 is not allowed")
        if wt == VARINT:
            val, pos = read_varint(buf, pos)
        elif wt == LEN:
            ln, pos = read_varint(buf, pos)
            if pos + ln > n:
                raise WireError(f"field {field}: length {ln} runs past the end of the message")
            val = buf[pos : pos + ln]
            pos += ln
        elif wt == I64:
            if pos + 8 > n:
                raise WireError("truncated fixed64")
            val = bytes(buf[pos : pos + 8])
            pos += 8
        elif wt == I32:
            if pos + 4 > n:
                raise WireError("truncated fixed32")
            val = bytes(buf[pos : pos + 4])
            pos += 4
        else:
            raise WireError(f"unsupported wire type {wt} for field {field}")
        yield field, wt, val


def parse(buf: bytes | memoryview, max_fields: int = MAX_FIELDS) -> dict:
    """``{field: [(wire type, raw value)]}`` of one message (see :func:`iter_fields`).

    LEN values are copied to ``bytes`` (an empty one costs nothing, a
    memoryview 184 bytes), so a message costs at most ~50 times its size.
    At most ``max_fields`` fields.
    """
    out: dict = {}
    count = 0
    for field, wt, val in iter_fields(buf):
        count += 1
        if count > max_fields:
            raise WireError(f"a message has more than {max_fields} fields")
        out.setdefault(field, []).append((wt, bytes(val) if wt == LEN else val))
    return out


def signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def signed32(v: int) -> int:
    v &= (1 << 64) - 1
    return signed64(v) if v >= 1 << 63 else (v - (1 << 32) if v >= 1 << 31 else v)


def ints(msg: dict, field: int, signed: bool = True) -> list:
    """A repeated integer field, packed or not."""
    vals = []
    for wt, v in msg.get(field, ()):
        if wt == VARINT:
            vals.append(v)
        elif wt == LEN:
            pos, data = 0, v
            while pos < len(data):
                x, pos = read_varint(data, pos)
                vals.append(x)
        else:
            raise WireError(f"field {field}: wire type {wt} for an integer field")
    return [signed64(x) for x in vals] if signed else vals


def floats(msg: dict, field: int, fmt: str = "<f") -> list:
    size = struct.calcsize(fmt)
    vals = []
    for wt, v in msg.get(field, ()):
        if wt in (I32, I64):
            if len(v) != size:
                raise WireError(f"field {field}: a {len(v)}-byte value where {size} are expected")
            vals.append(struct.unpack(fmt, v)[0])
        elif wt == LEN:
            if len(v) % size:
                raise WireError(
                    f"field {field}: packed length {len(v)} is not a multiple of {size}"
                )
            vals.extend(x[0] for x in struct.iter_unpack(fmt, bytes(v)))
        else:
            raise WireError(f"field {field}: wire type {wt} for a floating-point field")
    return vals


def one(msg: dict, field: int, default=None, wt: int | None = None):
    """The last value of a singular field (``wt`` checks its wire type when given)."""
    vals = msg.get(field)
    if not vals:
        return default
    got, v = vals[-1]
    if wt is not None and got != wt:
        raise WireError(f"field {field}: wire type {got} where {wt} is expected")
    return v


def integer(msg: dict, field: int, default: int = 0) -> int:
    return one(msg, field, default, VARINT)


def _text(v: memoryview, field: int) -> str:
    try:
        return bytes(v).decode("utf-8")
    except UnicodeDecodeError:
        raise WireError(f"field {field}: a string that is not UTF-8") from None


def string(msg: dict, field: int, default: str | None = None) -> str | None:
    v = one(msg, field, None, LEN)
    return default if v is None else _text(v, field)


def strings(msg: dict, field: int) -> list:
    out = []
    for wt, v in msg.get(field, ()):
        if wt != LEN:
            raise WireError(f"field {field}: wire type {wt} for a string field")
        out.append(_text(v, field))
    return out


def message(msg: dict, field: int) -> dict:
    """The last sub-message in ``field``, parsed (empty when absent)."""
    v = one(msg, field, None, LEN)
    return {} if v is None else parse(v)


def messages(msg: dict, field: int) -> list:
    out = []
    for wt, v in msg.get(field, ()):
        if wt != LEN:
            raise WireError(f"field {field}: wire type {wt} for a message field")
        out.append(parse(v))
    return out


# --- writing -----------------------------------------------------------------------------------
def _varint(v: int) -> bytes:
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def f_varint(field: int, v: int) -> bytes:
    return _varint(field << 3 | VARINT) + _varint(int(v))


def f_bytes(field: int, data: bytes) -> bytes:
    return _varint(field << 3 | LEN) + _varint(len(data)) + data


def f_string(field: int, s: str) -> bytes:
    return f_bytes(field, s.encode("utf-8"))


def f_float(field: int, v: float) -> bytes:
    return _varint(field << 3 | I32) + struct.pack("<f", v)


def f_double(field: int, v: float) -> bytes:
    return _varint(field << 3 | I64) + struct.pack("<d", v)
