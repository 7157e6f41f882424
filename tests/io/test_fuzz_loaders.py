"""Seeded mutation fuzzing of every loader: only documented errors, bounded memory and time.

Each loader gets valid seed files, mutated (bit flips, interesting integers,
cuts, insertions, splices, and for checksummed layouts header edits with the
checksum fixed up so the parser behind it is reached). A loader may accept a
mutated file or raise a :class:`~oar_io.errors.CheckpointError` subclass naming
the file; anything else (KeyError, UnicodeDecodeError, RecursionError,
MemoryError...) fails. tracemalloc's peak per input must stay under
``64 x input size + 4 MiB``. CI runs ``FUZZ_N`` inputs per loader; the long run
(``OAR_SLOW=1``, marked ``slow``) runs 10,000.
"""

from __future__ import annotations

import io
import json
import os
import random
import struct
import time
import tracemalloc
import zlib

import numpy as np
import pytest
from oar import fluid
from oar_io import container, manifest, program_desc, wire
from oar_io.errors import CheckpointError
from oar_io.program_json import JsonProgramFormat
from oar_io.tensor_formats import FluidTensorFormat, OarTensorFormat

FUZZ_N = int(os.environ.get("OAR_IO_FUZZ_N", "300"))
LONG_N = 10_000
PATH = "fuzzed-file"
INTERESTING = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFFFFFF, 0xFFFFFFFF, 1 << 40, (1 << 63) - 1]


def _program():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data(name="x", shape=[4], dtype="float32")
        h = fluid.layers.fc(x, 8, act="relu")
        y = fluid.layers.fc(h, 2)
        fluid.layers.softmax(y)
    return main, y


def _seeds() -> dict:
    main, y = _program()
    pruned = main.clone(for_test=True)
    arrays = [np.arange(12, dtype="float32").reshape(3, 4), np.array([1, 2, 3], "int64")]
    oar_t, fluid_t = [], []
    for a, lod in ((arrays[0], [[0, 1, 3]]), (arrays[1], [])):
        for fmt, out in ((OarTensorFormat(), oar_t), (FluidTensorFormat(), fluid_t)):
            f = io.BytesIO()
            fmt.write(f, "w", a, lod)
            out.append(f.getvalue())
    state = io.BytesIO()
    container.write_dict(
        state,
        {"w": arrays[0], "b": arrays[1], "LR_Scheduler": {"step_num": 3, "ls": [1, 2.5]}},
    )
    return {
        "protobuf_model": [
            program_desc.dump_program(pruned, ["x"], [y.name]),
            program_desc.dump_program(main, [], []),
        ],
        "json_program": [JsonProgramFormat().dumps(pruned, ["x"], [y.name])],
        "oar_tensor": oar_t,
        "fluid_tensor": fluid_t,
        "state_dict": [state.getvalue()],
        "manifest": [
            manifest.dumps("12-abc", {"w": {"size": 10, "checksum": ["xxh3_64", 5]}}),
        ],
    }


def _load(kind: str, data: bytes) -> None:
    if kind == "protobuf_model":
        program_desc.parse_program(data, PATH)
    elif kind == "json_program":
        JsonProgramFormat().loads(data, PATH)
    elif kind == "oar_tensor":
        f = io.BytesIO(data)
        OarTensorFormat().read(io.BufferedReader(f), PATH, None)
    elif kind == "fluid_tensor":
        FluidTensorFormat().read(io.BytesIO(data), PATH, "w")
    elif kind == "state_dict":
        container.load_dict(PATH, io.BufferedReader(io.BytesIO(data)))
    elif kind == "manifest":
        manifest.loads(data, PATH)
    else:
        raise AssertionError(kind)


def _fix_oar_header(rng: random.Random, data: bytes) -> bytes:
    """Edit an oar record's JSON header and recompute its CRC, so the checks behind it run."""
    if data[:4] != b"OART" or len(data) < 14:
        return data
    (hlen,) = struct.unpack("<I", data[6:10])
    try:
        h = json.loads(data[10 : 10 + hlen])
    except ValueError:
        return data
    field = rng.choice(["dtype", "shape", "nbytes", "lod", "name", "checksum"])
    h[field] = rng.choice(
        [
            "object",
            "U8",
            "V4",
            -1,
            1 << 62,
            [1 << 31, 1 << 31],
            [-3, 4],
            [[0, 99]],
            [[5, 1, 2]],
            None,
            {"a": 1},
            ["md5", 1],
            "x" * 5,
            [3] * 70,
        ]
    )
    body = json.dumps(h).encode()
    head = data[:4] + struct.pack("<HI", 1, len(body)) + body + struct.pack("<I", zlib.crc32(body))
    pad = (-len(head)) % 64
    return head + b"\0" * pad + data[10 + hlen + 4 + ((-(10 + hlen + 4)) % 64) :]


def mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(9)
        n = len(b)
        if op == 0 and n:
            i = rng.randrange(n)
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1 and n:
            b[rng.randrange(n)] = rng.choice((0, 0xFF, 0x7F, 0x80, rng.randrange(256)))
        elif op == 2 and n > 8:
            i = rng.randrange(n - 8)
            v = rng.choice(INTERESTING)
            fmt = rng.choice(("<I", "<Q", "<i"))
            try:
                b[i : i + struct.calcsize(fmt)] = struct.pack(
                    fmt, v & ((1 << 32) - 1) if fmt != "<Q" else v
                )
            except struct.error:
                pass
        elif op == 3 and n:
            del b[rng.randrange(n) :]
        elif op == 4 and n:
            i = rng.randrange(n)
            del b[i : i + rng.randint(1, 16)]
        elif op == 5:
            i = rng.randrange(n + 1)
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif op == 6 and n > 2:
            i, j = sorted(rng.sample(range(n), 2))
            k = rng.randrange(n + 1)
            b[k:k] = b[i:j][: 1 << 14] * rng.choice((1, 2, 8))
        elif op == 7 and n:
            i = rng.randrange(n)  # a varint that never ends / is huge
            b[i:i] = b"\xff" * rng.randint(1, 12) + b"\x01"
        else:
            b[:] = _fix_oar_header(rng, bytes(b))
    return bytes(b)


def _run(kind: str, count: int, seed: int) -> dict:
    rng = random.Random(seed)
    seeds = _seeds()[kind]
    for s in seeds:  # the seeds themselves load
        _load(kind, s)
    stats = {"trials": 0, "accepted": 0, "rejected": 0, "failures": [], "worst_ratio": 0.0}
    slowest = 0.0
    for _ in range(count):
        data = mutate(rng, rng.choice(seeds))
        tracemalloc.start()
        t = time.perf_counter()
        try:
            _load(kind, data)
            stats["accepted"] += 1
        except CheckpointError as exc:
            stats["rejected"] += 1
            if PATH not in str(exc):
                stats["failures"].append(("no file name", data[:64], str(exc)[:200]))
        except Exception as exc:  # the point of the test
            stats["failures"].append((type(exc).__name__, data[:64], str(exc)[:200]))
        finally:
            elapsed = time.perf_counter() - t
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        stats["trials"] += 1
        slowest = max(slowest, elapsed)
        stats["worst_ratio"] = max(stats["worst_ratio"], peak / max(len(data), 1))
        if peak > 64 * len(data) + (4 << 20):
            stats["failures"].append(("memory", data[:64], f"peak {peak} for {len(data)} bytes"))
    stats["slowest_s"] = slowest
    return stats


KINDS = ["protobuf_model", "json_program", "oar_tensor", "fluid_tensor", "state_dict", "manifest"]


@pytest.mark.parametrize("kind", KINDS)
def test_fuzz_loader(kind):
    stats = _run(kind, FUZZ_N, seed=zlib.crc32(kind.encode()))
    print(kind, {k: v for k, v in stats.items() if k != "failures"}, len(stats["failures"]))
    assert not stats["failures"], stats["failures"][:5]
    assert stats["slowest_s"] < 5.0  # a generous bound: a loader stuck in a loop fails here


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("OAR_SLOW"), reason="long fuzz run: set OAR_SLOW=1")
@pytest.mark.parametrize("kind", KINDS)
def test_fuzz_loader_long(kind):
    stats = _run(kind, LONG_N, seed=12345)
    print(kind, {k: v for k, v in stats.items() if k != "failures"}, len(stats["failures"]))
    assert not stats["failures"], stats["failures"][:5]


def test_huge_declared_tensor_fails_fast_without_allocating():
    """A Fluid header declaring a 100 GB tensor is refused before np.empty."""
    desc = wire.f_varint(1, 5) + wire.f_varint(2, 25_000) + wire.f_varint(2, 1_000_000)
    data = struct.pack("<IQ", 0, 0) + struct.pack("<Ii", 0, len(desc)) + desc + b"\0" * 64
    tracemalloc.start()
    with pytest.raises(CheckpointError, match=r"fuzzed-file.*declares 100000000000 bytes"):
        FluidTensorFormat().read(io.BytesIO(data), PATH, "w")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20


def test_crafted_2mb_protobuf_costs_a_small_multiple_of_its_size():
    """Many minimal variables, and one variable repeating an empty field a million times."""
    w = wire
    many = b"".join(
        w.f_bytes(3, w.f_string(1, f"v{i}") + w.f_bytes(2, w.f_varint(1, 7)))
        for i in range(150_000)
    )
    repeated = w.f_bytes(
        3, w.f_string(1, "a") + w.f_bytes(2, w.f_varint(1, 7)) + b"\x3a\x00" * 1_000_000
    )
    for body in (many, repeated):
        data = w.f_bytes(1, w.f_varint(1, 0) + w.f_varint(2, (1 << 64) - 1) + body)
        tracemalloc.start()
        program_desc.parse_program(data, PATH)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 64 * len(data), (len(data), peak)


def test_deeply_nested_json_is_refused():
    doc = (
        b'{"format": "oar.inference_model", "version": 1, "x": '
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}"
    )
    with pytest.raises(CheckpointError, match="fuzzed-file.*nests deeper"):
        JsonProgramFormat().loads(doc, PATH)


def test_block_parent_cycle_is_refused():
    main, _ = _program()
    d = main.to_dict()
    d["blocks"].append(dict(d["blocks"][0], idx=1, parent_idx=1, vars=[], ops=[]))
    doc = json.dumps(
        {
            "format": "oar.inference_model",
            "version": 1,
            "feed_target_names": [],
            "fetch_target_names": [],
            "program": d,
        }
    ).encode()
    with pytest.raises(CheckpointError, match="fuzzed-file.*block 1.*parent 1"):
        JsonProgramFormat().loads(doc, PATH)
