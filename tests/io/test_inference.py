"""save_inference_model pruning and load_inference_model in a fresh scope."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from iotest_util import batch, build_mlp
from oar import fluid


def _trained(fresh):
    main, startup = fresh
    x, y, pred, avg = build_mlp(optimizer="adam")
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    for i in range(3):
        exe.run(main, feed=batch(i), fetch_list=[avg])
    return main, exe, pred, avg


def test_pruned_program_has_only_the_inference_path(fresh):
    main, exe, pred, _ = _trained(fresh)
    names = fluid.io.save_inference_model("inf", ["x"], [pred], exe, main)
    assert names == [pred.name]
    assert sorted(os.listdir("inf")) == [
        ".oar-manifest.json",
        "__model__",
        "fc_0.b_0",
        "fc_0.w_0",
        "fc_1.b_0",
        "fc_1.w_0",
    ]
    doc = json.load(open("inf/__model__"))
    assert doc["format"] == "oar.inference_model" and doc["version"] == 1
    ops = [op["type"] for op in doc["program"]["blocks"][0]["ops"]]
    assert ops == ["mul", "elementwise_add", "relu", "mul", "elementwise_add"]
    var_names = {v["name"] for v in doc["program"]["blocks"][0]["vars"]}
    assert "y" not in var_names and not any("@GRAD" in n or "moment" in n for n in var_names)
    want = exe.run(main.clone(for_test=True), feed=batch(7), fetch_list=[pred])[0]
    with fluid.scope_guard(fluid.Scope()):
        prog, feeds, fetches = fluid.io.load_inference_model("inf", exe)
        assert sorted(fluid.global_scope().local_var_names()) == [
            "fc_0.b_0",
            "fc_0.w_0",
            "fc_1.b_0",
            "fc_1.w_0",
        ]
        got = exe.run(prog, feed={"x": batch(7)["x"]}, fetch_list=fetches)[0]
    np.testing.assert_array_equal(got, want)
    # the training program is untouched
    assert any(op.type == "adam" for op in main.global_block().ops)


def test_combined_params_and_custom_model_filename(fresh):
    main, exe, pred, _ = _trained(fresh)
    fluid.io.save_inference_model(
        "inf", "x", pred, exe, main, model_filename="model.json", params_filename="params.bin"
    )
    assert sorted(os.listdir("inf")) == [".oar-manifest.json", "model.json", "params.bin"]
    with fluid.scope_guard(fluid.Scope()):
        prog, feeds, fetches = fluid.io.load_inference_model(
            "inf", exe, model_filename="model.json", params_filename="params.bin"
        )
        assert feeds == ["x"] and [f.name for f in fetches] == [pred.name]


def test_program_only_and_export_for_deployment_false(fresh):
    main, exe, pred, _ = _trained(fresh)
    fluid.io.save_inference_model("po", ["x"], [pred], exe, main, program_only=True)
    assert sorted(os.listdir("po")) == [".oar-manifest.json", "__model__"]
    fluid.io.save_inference_model("full", ["x"], [pred], exe, main, export_for_deployment=False)
    doc = json.load(open("full/__model__"))
    assert "adam" in [op["type"] for op in doc["program"]["blocks"][0]["ops"]]


def test_bad_arguments(fresh):
    main, exe, pred, _ = _trained(fresh)
    with pytest.raises(TypeError, match="feeded_var_names"):
        fluid.io.save_inference_model("e", [1], [pred], exe, main)
    with pytest.raises(TypeError, match="target_vars"):
        fluid.io.save_inference_model("e", ["x"], ["not a var"], exe, main)
    with pytest.raises(ValueError, match="feed variable 'nope'"):
        fluid.io.save_inference_model("e", ["nope"], [pred], exe, main)
    assert not os.path.exists("e")
    with pytest.raises(FileNotFoundError, match="__model__"):
        fluid.io.load_inference_model("e", exe)
    os.makedirs("junk")
    open("junk/__model__", "wb").write(b"\x00\x01garbage")
    with pytest.raises(ValueError, match="no known program format"):
        fluid.io.load_inference_model("junk", exe)
