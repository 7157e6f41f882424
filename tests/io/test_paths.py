"""Names from variables or model files never make a save write, or a load read, outside its directory."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from oar import fluid
from oar_io import wire
from oar_io.errors import CheckpointError, UnsafePathError

BAD_NAMES = ["../x", "/tmp/oar-abs-target", "a/../../x", "./x", "a//b", "", "x\0y", "..", "a/.."]


def _program_with(name: str):
    main = fluid.default_main_program()
    v = main.global_block().create_var(name=name, shape=[2], dtype="float32", persistable=True)
    fluid.global_scope().var(name).get_tensor().set(np.full(2, 7, "float32"), None)
    return main, v


@pytest.mark.parametrize("name", BAD_NAMES)
def test_save_refuses_variable_names_that_escape(fresh, name):
    victim = "/tmp/oar-abs-target"
    if os.path.exists(victim):
        os.unlink(victim)
    main, v = _program_with(name)
    before = sorted(os.listdir("."))
    for save in (
        lambda: fluid.io.save_vars(None, "d", main, vars=[v]),
        lambda: fluid.io.save_persistables(None, "d", main),
        lambda: fluid.io.save_persistables(None, "d", main, filename=None, format="fluid"),
    ):
        with pytest.raises(
            UnsafePathError, match=r"save_vars: variable .*inside the directory 'd'"
        ):
            save()
    assert sorted(os.listdir(".")) == before  # nothing written, no staging debris
    assert not os.path.exists(victim) and not os.path.exists("../x")


def test_save_refuses_escaping_file_names(fresh):
    main, v = _program_with("w")
    x = fluid.layers.data(name="x", shape=[2], dtype="float32")
    y = fluid.layers.elementwise_add(x, v)
    with pytest.raises(UnsafePathError, match=r"save_vars: filename '\.\./p'"):
        fluid.io.save_vars(None, "d", main, vars=[v], filename="../p")
    with pytest.raises(UnsafePathError, match=r"save_inference_model: model_filename '/abs/m'"):
        fluid.io.save_inference_model("inf", ["x"], [y], None, main, model_filename="/abs/m")
    with pytest.raises(UnsafePathError, match=r"save_inference_model: filename '\.\./params'"):
        fluid.io.save_inference_model("inf", ["x"], [y], None, main, params_filename="../params")
    assert not os.path.exists("d") and not os.path.exists("inf") and not os.path.exists("p")


def test_symlink_inside_the_directory_pointing_out_is_refused(fresh, tmp_path):
    main, v = _program_with("w")
    fluid.io.save_persistables(None, "d", main)
    outside = tmp_path / "outside"
    outside.write_bytes(b"secret contents")
    os.unlink("d/w")
    os.symlink(outside, "d/w")
    with pytest.raises(UnsafePathError, match=r"variable 'w'.*outside the directory 'd'") as e:
        fluid.io.load_persistables(None, "d", main)
    assert "secret" not in str(e.value)


def _crafted_protobuf(evil: str) -> bytes:
    """A ProgramDesc with one persistable variable named ``evil`` (and a feed/fetch of it)."""
    w = wire
    td = w.f_varint(1, 5) + w.f_varint(2, 2)
    vt = w.f_varint(1, 7) + w.f_bytes(3, w.f_bytes(1, td))
    var = w.f_string(1, evil) + w.f_bytes(2, vt) + w.f_varint(3, 1)
    x = w.f_string(1, "x") + w.f_bytes(2, vt)
    return w.f_bytes(
        1,
        w.f_varint(1, 0)
        + w.f_varint(2, (1 << 64) - 1)
        + w.f_bytes(3, var)
        + w.f_bytes(3, x)
        + w.f_bytes(
            4,
            w.f_bytes(1, w.f_string(1, "X") + w.f_string(2, "feed"))
            + w.f_bytes(2, w.f_string(1, "Out") + w.f_string(2, "x"))
            + w.f_string(3, "feed"),
        ),
    )


def _crafted_json(evil: str) -> bytes:
    main = fluid.Program()
    main.global_block().create_var(name="x", shape=[2], dtype="float32")
    main.global_block().create_var(name=evil, shape=[2], dtype="float32", persistable=True)
    doc = {
        "format": "oar.inference_model",
        "version": 1,
        "feed_target_names": ["x"],
        "fetch_target_names": [],
        "program": main.to_dict(),
    }
    return json.dumps(doc).encode()


@pytest.mark.parametrize("make", [_crafted_protobuf, _crafted_json], ids=["protobuf", "json"])
@pytest.mark.parametrize("evil", ["SECRET_ABS", "../secret", "a/../../secret"])
def test_crafted_model_naming_outside_files_is_refused_unread(fresh, tmp_path, make, evil):
    secret = tmp_path / "secret"
    secret.write_bytes(b"\0\0\0\0TOP-SECRET-BYTES" * 10)
    evil = str(secret) if evil == "SECRET_ABS" else evil
    os.makedirs("m/a")
    with open("m/__model__", "wb") as f:
        f.write(make(evil))
    atime = os.stat(secret).st_atime_ns
    with pytest.raises(UnsafePathError, match=r"model file '.*__model__' names persistable") as e:
        fluid.io.load_inference_model("m", None)
    assert "TOP-SECRET" not in str(e.value) and "\\x00" not in str(e.value)
    assert os.stat(secret).st_atime_ns == atime  # (noatime mounts make this weak; the error is not)


def test_reexport_of_a_crafted_program_plants_nothing(fresh, tmp_path):
    """A program holding an escaping persistable name cannot be saved next to the export."""
    main, v = _program_with("../planted")
    x = fluid.layers.data(name="x", shape=[2], dtype="float32")
    y = fluid.layers.elementwise_add(x, v)
    with pytest.raises(UnsafePathError, match="save_inference_model: variable '../planted'"):
        fluid.io.save_inference_model("export", ["x"], [y], None, main)
    assert not (tmp_path / "planted").exists() and not os.path.exists("export")


def test_errors_are_checkpoint_errors():
    assert issubclass(UnsafePathError, CheckpointError) and issubclass(UnsafePathError, ValueError)
