"""Tensor formats: round trips for every dtype and LoD depth, damaged files, third-party formats."""

from __future__ import annotations

import io
import os

import numpy as np
import oar
import pytest
from oar import fluid
from oar_io.errors import CorruptFileError, MismatchError, TruncatedFileError
from oar_io.tensor_formats import FluidTensorFormat, OarTensorFormat

DTYPES = ["float16", "float32", "float64", "int16", "int32", "int64", "uint8", "bool", "int8"]
LODS = {0: [], 1: [[0, 2, 3, 6]], 2: [[0, 2, 3], [0, 1, 3, 6]]}


def _value(dtype):
    rng = np.random.default_rng(7)
    a = rng.uniform(-50, 50, (6, 3))
    return (a > 0) if dtype == "bool" else a.astype(dtype)


@pytest.mark.parametrize("fmt", [OarTensorFormat(), FluidTensorFormat()], ids=lambda f: f.name)
@pytest.mark.parametrize("levels", [0, 1, 2])
@pytest.mark.parametrize("dtype", DTYPES)
def test_record_round_trip(fmt, dtype, levels):
    a = _value(dtype)
    buf = io.BytesIO()
    fmt.write(buf, "v", a, LODS[levels])
    buf.seek(0)
    b, lod = fmt.read(buf, "<mem>", "v")
    assert b.dtype == a.dtype and b.shape == a.shape
    np.testing.assert_array_equal(a, b)
    assert lod == LODS[levels]
    assert buf.read() == b""


@pytest.mark.parametrize("fmt", ["oar", "fluid"])
def test_scope_round_trip_keeps_lod_and_dtype(fresh, fmt):
    main, _ = fresh
    vars_ = []
    for i, dtype in enumerate(DTYPES):
        v = main.global_block().create_var(
            name=f"v_{dtype}", shape=[6, 3], dtype=dtype, persistable=True, lod_level=i % 3
        )
        t = fluid.global_scope().var(v.name).get_tensor()
        t.set(_value(dtype), fluid.CPUPlace())
        t.set_lod(LODS[i % 3])
        vars_.append(v)
    fluid.io.save_vars(None, "d", main, vars=vars_, format=fmt)
    fluid.io.save_vars(None, "d", main, vars=vars_, filename="combined", format=fmt)
    for filename in (None, "combined"):
        with fluid.scope_guard(fluid.Scope()):
            fluid.io.load_vars(None, "d", main, vars=vars_, filename=filename)
            for i, dtype in enumerate(DTYPES):
                t = fluid.global_scope().find_var(f"v_{dtype}").get_tensor()
                np.testing.assert_array_equal(np.array(t), _value(dtype))
                assert np.array(t).dtype.name == dtype
                assert t.lod() == LODS[i % 3]


def _saved(fresh_programs, fmt="oar", filename=None):
    main, _ = fresh_programs
    v = main.global_block().create_var(name="w", shape=[64, 16], dtype="float32", persistable=True)
    u = main.global_block().create_var(name="u", shape=[3], dtype="int64", persistable=True)
    fluid.global_scope().var("w").get_tensor().set(np.ones((64, 16), "float32"), fluid.CPUPlace())
    fluid.global_scope().var("u").get_tensor().set(np.arange(3), fluid.CPUPlace())
    fluid.io.save_vars(None, "d", main, vars=[v, u], filename=filename, format=fmt)
    return main, [v, u]


@pytest.mark.parametrize("fmt", ["oar", "fluid"])
def test_truncated_file(fresh, fmt):
    main, vars_ = _saved(fresh, fmt)
    size = os.path.getsize("d/w")
    for cut in (size - 10, 30, 6):
        with open("d/w", "r+b") as f:
            f.truncate(cut)
        with pytest.raises(TruncatedFileError, match=r"d/w.*variable 'w'.*truncated"):
            fluid.io.load_vars(None, "d", main, vars=vars_)


def test_crc32_records_still_verify(monkeypatch):
    """Files written without xxhash (CRC-32) load and verify anywhere."""
    from oar_io import tensor_formats as tf

    buf = io.BytesIO()
    monkeypatch.setattr(tf, "_xxhash", None)
    OarTensorFormat().write(buf, "v", np.arange(10.0), [])
    monkeypatch.undo()
    assert b'"checksum":["crc32"' in buf.getvalue()
    data = bytearray(buf.getvalue())
    buf.seek(0)
    np.testing.assert_array_equal(OarTensorFormat().read(buf, "<mem>", "v")[0], np.arange(10.0))
    data[-3] ^= 1
    with pytest.raises(CorruptFileError, match="crc32 checksum"):
        OarTensorFormat().read(io.BytesIO(bytes(data)), "<mem>", "v")


def test_corrupted_data_fails_checksum(fresh):
    main, vars_ = _saved(fresh)
    with open("d/w", "r+b") as f:
        f.seek(os.path.getsize("d/w") - 100)
        f.write(b"\x13")
    with pytest.raises(CorruptFileError, match=r"d/w.*variable 'w'.*checksum"):
        fluid.io.load_vars(None, "d", main, vars=vars_)


def test_corrupted_header_fails(fresh):
    main, vars_ = _saved(fresh)
    with open("d/w", "r+b") as f:
        f.seek(20)
        f.write(b"9")  # inside the JSON header
    with pytest.raises(CorruptFileError, match=r"d/w.*header fails its checksum"):
        fluid.io.load_vars(None, "d", main, vars=vars_)
    with open("d/u", "r+b") as f:
        f.write(b"XXXX")
    with pytest.raises(CorruptFileError, match=r"d/u.*no known tensor format"):
        fluid.io.load_vars(None, "d", main, vars=[vars_[1]])


def test_mismatched_files(fresh):
    main, vars_ = _saved(fresh, filename="all")
    # a combined file read with another variable list
    extra = main.global_block().create_var(
        name="a_first", shape=[1], dtype="float32", persistable=True
    )
    with pytest.raises(MismatchError, match="record holds variable 'u'"):
        fluid.io.load_vars(None, "d", main, vars=vars_ + [extra], filename="all")
    with pytest.raises(MismatchError, match="more data"):
        fluid.io.load_vars(None, "d", main, vars=vars_[1:], filename="all")
    # a per-variable file that holds another variable
    fluid.io.save_vars(None, "d2", main, vars=vars_)
    os.replace("d2/u", "d2/w")
    with pytest.raises(MismatchError, match=r"d2/w.*holds variable 'u'"):
        fluid.io.load_vars(None, "d2", main, vars=[vars_[0]])


def test_fluid_combined_file_with_too_few_variables(fresh):
    main, vars_ = _saved(fresh, fmt="fluid", filename="all")
    extra = main.global_block().create_var(
        name="z_last", shape=[1], dtype="float32", persistable=True
    )
    with pytest.raises(MismatchError, match=r"all.*z_last.*ends before"):
        fluid.io.load_vars(None, "d", main, vars=vars_ + [extra], filename="all")


class _TextFormat:
    """A third-party tensor format: one line of JSON per record (for the plugin test)."""

    name = "jsonl-test"
    kind = "tensor"
    checked = False

    def sniff(self, head):
        return head[:9] == b'{"jsonl":'

    def write(self, f, name, array, lod=None):
        import json

        f.write(
            json.dumps(
                {
                    "jsonl": 1,
                    "name": name,
                    "dtype": array.dtype.name,
                    "data": array.tolist(),
                    "lod": lod or [],
                }
            ).encode()
            + b"\n"
        )

    def read(self, f, path, name=None):
        import json

        d = json.loads(f.readline())
        return np.array(d["data"], dtype=d["dtype"]), d["lod"]


class _ThirdPartyPlugin:
    @oar.hookspecs.hookimpl
    def oar_register_formats(self, registry):
        registry.register("jsonl-test", _TextFormat())


def test_third_party_format_selectable_by_name(fresh):
    from oar.plugins import registries

    if "jsonl-test" not in registries().formats:
        oar.plugins.register(_ThirdPartyPlugin(), name="jsonl-test-plugin")
    main, vars_ = _saved(fresh)
    fluid.io.save_vars(None, "j", main, vars=vars_, format="jsonl-test")
    assert open("j/u").read().startswith('{"jsonl":')
    with fluid.scope_guard(fluid.Scope()):
        fluid.io.load_vars(None, "j", main, vars=vars_)  # recognised by sniffing
        np.testing.assert_array_equal(
            np.array(fluid.global_scope().find_var("u").get_tensor()), np.arange(3)
        )
    with pytest.raises(ValueError, match="unknown format 'nope'"):
        fluid.io.save_vars(None, "k", main, vars=vars_, format="nope")
    with pytest.raises(ValueError, match="program format"):
        fluid.io.save_vars(None, "k", main, vars=vars_, format="json")
