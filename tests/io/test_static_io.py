"""save/load of params, persistables and chosen vars; errors for programs that do not fit."""

from __future__ import annotations

import os

import numpy as np
import pytest
from iotest_util import batch, build_mlp, scope_array
from oar import fluid
from oar_io.errors import MismatchError, MissingVariableError


def _train(exe, avg, steps=3, start=0):
    return [float(exe.run(feed=batch(start + i), fetch_list=[avg])[0][0]) for i in range(steps)]


def test_save_params_load_params_round_trip(fresh):
    main, startup = fresh
    _, _, pred, avg = build_mlp()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    _train(exe, avg)
    saved = {p.name: scope_array(p.name) for p in main.all_parameters()}
    fluid.io.save_params(exe, "params", main)
    assert sorted(os.listdir("params")) == sorted([*saved, ".oar-manifest.json"])
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)  # fresh initial values, then the saved ones on top
        fluid.io.load_params(exe, "params", main)
        for name, value in saved.items():
            np.testing.assert_array_equal(scope_array(name), value)
        test_prog = main.clone(for_test=True)
        out = exe.run(test_prog, feed=batch(0), fetch_list=[pred])[0]
    np.testing.assert_array_equal(
        out, exe.run(main.clone(for_test=True), feed=batch(0), fetch_list=[pred])[0]
    )


def test_program_var_helpers(fresh):
    main, _ = fresh
    build_mlp(optimizer="adam")
    assert [p.name for p in fluid.io.get_program_parameter(main)] == [
        "fc_0.w_0",
        "fc_0.b_0",
        "fc_1.w_0",
        "fc_1.b_0",
    ]
    persist = {v.name for v in fluid.io.get_program_persistable_vars(main)}
    assert "fc_0.w_0_moment1_0" in persist and "x" not in persist
    assert fluid.io.is_parameter(main.global_block().var("fc_0.w_0"))


def test_combined_file_and_fluid_format(fresh):
    main, startup = fresh
    build_mlp(optimizer="adam")
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    names = sorted(v.name for v in main.list_vars() if v.persistable)
    for fmt in ("oar", "fluid"):
        fluid.io.save_persistables(exe, f"ckpt_{fmt}", main, filename="all.bin", format=fmt)
        assert sorted(os.listdir(f"ckpt_{fmt}")) == [".oar-manifest.json", "all.bin"]
        with fluid.scope_guard(fluid.Scope()):
            fluid.io.load_persistables(exe, f"ckpt_{fmt}", main, filename="all.bin")
            assert sorted(fluid.global_scope().local_var_names()) == names
    with open("ckpt_fluid/all.bin", "rb") as f:
        assert f.read(4) == b"\0\0\0\0"
    with open("ckpt_oar/all.bin", "rb") as f:
        assert f.read(4) == b"OART"


def test_save_vars_with_vars_and_predicate(fresh):
    main, startup = fresh
    build_mlp()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    w = main.global_block().var("fc_1.w_0")
    fluid.io.save_vars(exe, "only_w", main, vars=[w])
    assert sorted(os.listdir("only_w")) == [".oar-manifest.json", "fc_1.w_0"]
    fluid.io.save_vars(
        exe, "biases", main, predicate=lambda v: v.persistable and v.name.endswith(".b_0")
    )
    assert sorted(os.listdir("biases")) == [".oar-manifest.json", "fc_0.b_0", "fc_1.b_0"]
    before = scope_array("fc_1.w_0")
    fluid.global_scope().find_var("fc_1.w_0").get_tensor().set(
        np.zeros_like(before), fluid.CPUPlace()
    )
    fluid.io.load_vars(exe, "only_w", main, vars=[w])
    np.testing.assert_array_equal(scope_array("fc_1.w_0"), before)
    with pytest.raises(MissingVariableError, match="fc_0.w_0"):
        fluid.io.load_vars(exe, "biases", main, predicate=lambda v: v.name.startswith("fc_0"))


def test_missing_variable_file_is_named(fresh):
    main, startup = fresh
    build_mlp()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    fluid.io.save_params(exe, "p", main)
    os.remove("p/fc_0.b_0")
    with pytest.raises(MissingVariableError, match=r"fc_0\.b_0.*p/fc_0\.b_0"):
        fluid.io.load_params(exe, "p", main)
    with pytest.raises(MissingVariableError, match="does not exist"):
        fluid.io.load_params(exe, "nowhere", main)


def test_loading_into_program_of_other_shapes_is_an_error(fresh):
    main, startup = fresh
    build_mlp()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    fluid.io.save_params(exe, "p", main)
    other, other_start = fluid.Program(), fluid.Program()
    with fluid.program_guard(other, other_start), fluid.unique_name.guard():
        x = fluid.layers.data(name="x", shape=[4], dtype="float32")
        fluid.layers.fc(input=fluid.layers.fc(input=x, size=5, act="relu"), size=1)
    with pytest.raises(MismatchError, match=r"fc_0\.w_0.*shape \[4, 8\].*\[4, 5\]"):
        fluid.io.load_params(exe, "p", other)


def test_dtype_mismatch_is_an_error(fresh):
    main, startup = fresh
    v = main.global_block().create_var(name="counter", shape=[2], dtype="int64", persistable=True)
    fluid.global_scope().var("counter").get_tensor().set(
        np.array([1.5, 2.5], "float32"), fluid.CPUPlace()
    )
    fluid.io.save_vars(None, "c", main, vars=[v])
    with pytest.raises(MismatchError, match="counter.*float32.*int64"):
        fluid.io.load_vars(None, "c", main, vars=[v])


def test_load_before_startup_is_overwritten_as_the_seed_warns(fresh):
    """The guide: run startup *before* load_params; running it after overwrites the loaded values."""
    main, startup = fresh
    build_mlp()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    _train(exe, fluid.default_main_program().global_block().var("mean_0.tmp_0"), steps=2)
    fluid.io.save_params(exe, "p", main)
    trained = scope_array("fc_0.w_0")
    with fluid.scope_guard(fluid.Scope()):
        fluid.io.load_params(exe, "p", main)  # allowed: the values land in the scope
        np.testing.assert_array_equal(scope_array("fc_0.w_0"), trained)
        exe.run(startup)  # ... and the startup program then re-initialises them
        assert not np.array_equal(scope_array("fc_0.w_0"), trained)


def test_saving_an_uninitialised_variable_names_it(fresh):
    main, startup = fresh
    build_mlp()
    with pytest.raises(ValueError, match="fc_0.w_0.*startup"):
        fluid.io.save_params(fluid.Executor(fluid.CPUPlace()), "p", main)
    assert not os.path.exists("p")


def test_compiled_program_is_refused(fresh):
    main, startup = fresh
    build_mlp()
    compiled = fluid.CompiledProgram(main)
    with pytest.raises(TypeError, match="CompiledProgram"):
        fluid.io.save_persistables(fluid.Executor(fluid.CPUPlace()), "p", compiled)


def test_save_into_existing_directory_keeps_other_files(fresh):
    main, startup = fresh
    build_mlp()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    os.makedirs("d/sub")
    for p in ("d/notes.txt", "d/sub/x"):
        with open(p, "w") as f:
            f.write("keep")
    fluid.io.save_params(exe, "d", main)
    fluid.io.save_persistables(exe, "d", main, filename="ckpt")
    assert {"notes.txt", "sub", "ckpt", "fc_0.w_0"} <= set(os.listdir("d"))
    assert open("d/sub/x").read() == "keep"
    from oar_io.atomic import wait_for_cleanup

    wait_for_cleanup()  # the replaced checkpoint is removed in the background
    assert not [e for e in os.listdir(".") if "oar-" in e]
