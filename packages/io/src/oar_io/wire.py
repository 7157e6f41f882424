"""A minimal protobuf wire-format reader and writer (proto2 scalars, strings, sub-messages).

Enough to read and write Fluid's ``TensorDesc`` and ``ProgramDesc`` without a
generated module: messages are parsed into ``{field number: [values]}`` and
the schema lives in :mod:`oar_io.program_desc` as plain field numbers.
"""

from __future__ import annotations

import struct

VARINT, I64, LEN, I32 = 0, 1, 2, 5


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


def read_varint(buf: bytes | memoryview, pos: int) -> tuple:
    result = shift = 0
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
        if shift > 70:
            raise WireError("varint too long")


def parse(buf: bytes | memoryview) -> dict:
    """``{field: [raw values]}``: ints for varint/fixed fields, memoryviews for LEN fields."""
    buf = memoryview(buf)
    out: dict = {}
    pos, n = 0, len(buf)
    while pos < n:
        key, pos = read_varint(buf, pos)
        field, wt = key >> 3, key & 7
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
        out.setdefault(field, []).append((wt, val))
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
    return [signed64(x) for x in vals] if signed else vals


def floats(msg: dict, field: int, fmt: str = "<f") -> list:
    size = struct.calcsize(fmt)
    vals = []
    for wt, v in msg.get(field, ()):
        if wt in (I32, I64):
            vals.append(struct.unpack(fmt, v)[0])
        elif wt == LEN:
            vals.extend(x[0] for x in struct.iter_unpack(fmt, bytes(v)))
    return vals if size else vals


def one(msg: dict, field: int, default=None):
    vals = msg.get(field)
    return vals[-1][1] if vals else default


def string(msg: dict, field: int, default: str | None = None) -> str | None:
    v = one(msg, field)
    return default if v is None else bytes(v).decode("utf-8")


def strings(msg: dict, field: int) -> list:
    return [bytes(v).decode("utf-8") for _, v in msg.get(field, ())]


def messages(msg: dict, field: int) -> list:
    return [parse(v) for _, v in msg.get(field, ())]


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
