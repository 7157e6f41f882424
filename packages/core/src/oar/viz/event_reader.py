"""Read scalars back from TensorBoard event files (TFRecord framing, CRC-checked), for plots and
tests, without TensorBoard itself."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

from oar.viz._optional import require


def _masked_crc(data: bytes, crc32c) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _records(path: Path) -> Iterator[bytes]:
    crc32c = require("tensorboardX.crc32c", "reading event files", "tensorboardX").crc32c
    data = path.read_bytes()
    pos = 0
    while pos < len(data):
        if pos + 12 > len(data):
            raise ValueError(f"{path}: truncated record header at byte {pos}")
        header = data[pos : pos + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", data[pos + 8 : pos + 12])
        if header_crc != _masked_crc(header, crc32c):
            raise ValueError(f"{path}: corrupt record header at byte {pos}")
        body = data[pos + 12 : pos + 12 + length]
        (body_crc,) = struct.unpack("<I", data[pos + 12 + length : pos + 16 + length])
        if len(body) != length or body_crc != _masked_crc(body, crc32c):
            raise ValueError(f"{path}: corrupt record at byte {pos}")
        yield body
        pos += 16 + length


def event_files(logdir: str | Path) -> list:
    return sorted(Path(logdir).rglob("events.out.tfevents.*"))


def read_scalars(logdir: str | Path) -> dict:
    """``{tag: [(step, value), ...]}`` of every scalar in the event files under ``logdir``."""
    event_pb2 = require("tensorboardX.proto.event_pb2", "reading event files", "tensorboardX")
    out: dict = {}
    for path in event_files(logdir):
        for raw in _records(path):
            event = event_pb2.Event.FromString(raw)
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    out.setdefault(value.tag, []).append((event.step, value.simple_value))
    for series in out.values():
        series.sort(key=lambda sv: sv[0])
    return out
