"""Files written by the real Fluid 1.8.5 load in oar, and oar's ``fluid``-format files load in Fluid.

Runs the Fluid oracle (``$FLUID18_PYTHON``, docs/oracle.md) as a black box in a subprocess;
skipped where it is not installed.
"""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest
from iotest_util import FLUID18
from oar import fluid

pytestmark = pytest.mark.skipif(
    not os.path.exists(FLUID18), reason="Fluid 1.8.5 oracle not installed"
)

FLUID_WRITER = r"""
import json, numpy as np, paddle.fluid as fluid
main, start = fluid.Program(), fluid.Program()
main.random_seed = start.random_seed = 3
with fluid.program_guard(main, start):
    x = fluid.layers.data(name="x", shape=[4], dtype="float32")
    h = fluid.layers.fc(x, size=5, act="relu")
    y = fluid.layers.fc(h, size=2, act="softmax")
    loss = fluid.layers.mean(y)
    fluid.optimizer.Adam(0.01).minimize(loss)
    seq = main.global_block().create_var(name="seq", shape=[6, 2], dtype="int64", persistable=True, lod_level=2)
exe = fluid.Executor(fluid.CPUPlace())
exe.run(start)
xv = np.linspace(-1, 1, 12).reshape(3, 4).astype("float32")
exe.run(main, feed={"x": xv}, fetch_list=[loss])
t = fluid.global_scope().var("seq").get_tensor()
t.set(np.arange(12).reshape(6, 2).astype("int64"), fluid.CPUPlace())
t.set_recursive_sequence_lengths([[2, 1], [1, 2, 3]])
fluid.io.save_params(exe, "f_params", main)
fluid.io.save_persistables(exe, "f_ckpt", main, filename="all")
fluid.io.save_vars(exe, "f_seq", main, vars=[seq])
fluid.io.save_inference_model("f_infer", ["x"], [y], exe, main)
fluid.io.save_inference_model("f_infer_comb", ["x"], [y], exe, main, model_filename="model", params_filename="params")
test_prog = main.clone(for_test=True)
pred = exe.run(test_prog, feed={"x": xv}, fetch_list=[y])[0]
vals = {v.name: np.array(fluid.global_scope().find_var(v.name).get_tensor()).tolist()
        for v in main.list_vars() if v.persistable and v.name != "seq"}
json.dump({"pred": pred.tolist(), "vals": vals}, open("fluid_out.json", "w"))
"""


def _oracle(code: str, cwd) -> None:
    r = subprocess.run([FLUID18, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]


def test_fluid_files_load_in_oar(fresh, tmp_path):
    _oracle(FLUID_WRITER, tmp_path)
    ref = json.load(open(tmp_path / "fluid_out.json"))
    main, _ = fresh
    block = main.global_block()
    for name, value in ref["vals"].items():
        a = np.asarray(value, dtype="float32")
        block.create_var(name=name, shape=a.shape, dtype="float32", persistable=True)
    seq = block.create_var(name="seq", shape=[6, 2], dtype="int64", persistable=True, lod_level=2)
    exe = fluid.Executor(fluid.CPUPlace())
    # per-variable parameter files
    fluid.io.load_vars(exe, "f_params", main, vars=["fc_0.w_0", "fc_0.b_0", "fc_1.w_0", "fc_1.b_0"])
    # the combined checkpoint with Adam accumulators and the learning rate
    with fluid.scope_guard(fluid.Scope()):
        fluid.io.load_persistables(exe, "f_ckpt", main, filename="all")
        for name, value in ref["vals"].items():
            np.testing.assert_array_equal(
                np.array(fluid.global_scope().find_var(name).get_tensor()),
                np.asarray(value, "float32"),
            )
    # a 2-level LoD int64 tensor
    fluid.io.load_vars(exe, "f_seq", main, vars=[seq])
    t = fluid.global_scope().find_var("seq").get_tensor()
    np.testing.assert_array_equal(np.array(t), np.arange(12).reshape(6, 2))
    assert t.recursive_sequence_lengths() == [[2, 1], [1, 2, 3]]
    # inference models (``__model__`` ProgramDesc + params), per-variable and combined
    xv = np.linspace(-1, 1, 12).reshape(3, 4).astype("float32")
    for d, kw in (
        ("f_infer", {}),
        ("f_infer_comb", {"model_filename": "model", "params_filename": "params"}),
    ):
        with fluid.scope_guard(fluid.Scope()):
            prog, feeds, fetches = fluid.io.load_inference_model(d, exe, **kw)
            assert feeds == ["x"]
            out = exe.run(prog, feed={"x": xv}, fetch_list=fetches)[0]
        np.testing.assert_allclose(out, np.asarray(ref["pred"]), rtol=1e-5, atol=1e-6)
        assert not any(
            op.type.endswith("_grad") or op.type == "adam" for op in prog.global_block().ops
        )


FLUID_READER = r"""
import json, numpy as np, paddle.fluid as fluid
main = fluid.Program()
blk = main.global_block()
spec = json.load(open("spec.json"))
vs = [blk.create_var(name=n, shape=s, dtype=d, persistable=True) for n, s, d in spec]
exe = fluid.Executor(fluid.CPUPlace())
out = {}
fluid.io.load_vars(exe, "o_vars", main, vars=vs)
out["per_var"] = {v.name: np.array(fluid.global_scope().find_var(v.name).get_tensor()).tolist() for v in vs}
lod = fluid.global_scope().find_var("seq").get_tensor().recursive_sequence_lengths()
with fluid.scope_guard(fluid.Scope()):
    fluid.io.load_vars(exe, "o_comb", main, vars=vs, filename="all")
    out["combined"] = {v.name: np.array(fluid.global_scope().find_var(v.name).get_tensor()).tolist() for v in vs}
with fluid.scope_guard(fluid.Scope()):
    prog, feeds, fetches = fluid.io.load_inference_model("o_infer", exe)
    xv = np.linspace(-1, 1, 12).reshape(3, 4).astype("float32")
    out["pred"] = exe.run(prog, feed={feeds[0]: xv}, fetch_list=fetches)[0].tolist()
out["lod"] = lod
json.dump(out, open("oar_read_by_fluid.json", "w"))
"""


def test_oar_fluid_format_loads_in_fluid(fresh, tmp_path):
    main, startup = fresh
    x = fluid.layers.data(name="x", shape=[4], dtype="float32")
    y = fluid.layers.fc(fluid.layers.fc(x, size=5, act="relu"), size=2, act="softmax")
    fluid.optimizer.SGD(0.1).minimize(fluid.layers.mean(y))
    block = main.global_block()
    block.create_var(name="seq", shape=[6, 2], dtype="int64", persistable=True, lod_level=1)
    block.create_var(name="half", shape=[2, 3], dtype="float16", persistable=True)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    t = fluid.global_scope().var("seq").get_tensor()
    t.set(np.arange(12).reshape(6, 2), fluid.CPUPlace())
    t.set_recursive_sequence_lengths([[4, 2]])
    fluid.global_scope().var("half").get_tensor().set(
        np.arange(6).reshape(2, 3).astype("float16"), None
    )
    vs = [v for v in main.list_vars() if v.persistable]
    fluid.io.save_vars(exe, "o_vars", main, vars=vs, format="fluid")
    fluid.io.save_vars(exe, "o_comb", main, vars=vs, filename="all", format="fluid")
    fluid.io.save_inference_model(
        "o_infer", ["x"], [y], exe, main, format="fluid", program_format="fluid_program"
    )
    xv = np.linspace(-1, 1, 12).reshape(3, 4).astype("float32")
    pred = exe.run(main.clone(for_test=True), feed={"x": xv}, fetch_list=[y])[0]
    json.dump([[v.name, list(v.shape), v.dtype] for v in vs], open("spec.json", "w"))
    _oracle(FLUID_READER, tmp_path)
    got = json.load(open(tmp_path / "oar_read_by_fluid.json"))
    for key in ("per_var", "combined"):
        for v in vs:
            want = np.array(fluid.global_scope().find_var(v.name).get_tensor())
            np.testing.assert_array_equal(np.asarray(got[key][v.name], dtype=want.dtype), want)
    assert got["lod"] == [[4, 2]]
    np.testing.assert_allclose(np.asarray(got["pred"]), pred, rtol=1e-5, atol=1e-6)
    # and oar reads the protobuf model it wrote
    with fluid.scope_guard(fluid.Scope()):
        prog, feeds, fetches = fluid.io.load_inference_model("o_infer", exe)
        np.testing.assert_allclose(
            exe.run(prog, feed={"x": xv}, fetch_list=fetches)[0], pred, rtol=1e-6
        )
