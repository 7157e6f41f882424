"""fluid.save / fluid.load, load_program_state / set_program_state, save_dygraph / load_dygraph."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
from iotest_util import batch, build_mlp, run_py, scope_array
from oar import fluid
from oar_io.errors import CorruptFileError, MismatchError, MissingVariableError


def test_fluid_save_load_round_trip(fresh):
    main, startup = fresh
    _, _, _, avg = build_mlp(optimizer="adam")
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    exe.run(main, feed=batch(0), fetch_list=[avg])
    fluid.save(main, "out/model")
    assert sorted(os.listdir("out")) == [
        "model.pdmodel",
        "model.pdopt",
        "model.pdparams",
        "model.pdsave",
    ]
    want = {v.name: scope_array(v.name) for v in main.list_vars() if v.persistable}
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        fluid.load(main, "out/model", exe)
        for name, value in want.items():
            np.testing.assert_array_equal(scope_array(name), value)
    state = fluid.io.load_program_state("out/model")
    assert set(state) == set(want)
    with fluid.scope_guard(fluid.Scope()):
        fluid.io.set_program_state(main, state)
        np.testing.assert_array_equal(scope_array("fc_0.w_0"), want["fc_0.w_0"])
        state["fc_0.w_0"] = np.zeros((3, 3), "float32")
        with pytest.raises(MismatchError, match=r"fc_0\.w_0.*\[3, 3\].*\[4, 8\]"):
            fluid.io.set_program_state(main, state)


def test_load_program_state_from_directory(fresh):
    main, startup = fresh
    build_mlp()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    fluid.io.save_params(exe, "p", main, format="fluid")
    state = fluid.load_program_state("p")
    assert sorted(state) == ["fc_0.b_0", "fc_0.w_0", "fc_1.b_0", "fc_1.w_0"]
    np.testing.assert_array_equal(state["fc_1.w_0"], scope_array("fc_1.w_0"))
    with pytest.raises(MissingVariableError):
        fluid.load_program_state("nothing/here")


class _Param:
    """Stands in for a dygraph ParamBase: ``.numpy()`` and ``trainable``."""

    trainable = True

    def __init__(self, a):
        self._a = a

    def numpy(self):
        return self._a


def test_save_dygraph_load_dygraph(tmp_path):
    os.chdir(tmp_path)
    model = {
        "fc.weight": _Param(np.arange(6, dtype="float32").reshape(2, 3)),
        "fc.bias": _Param(np.zeros(3, "float32")),
    }
    opt = {
        "fc.weight_moment1_0": np.ones((2, 3), "float32"),
        "global_step": np.array([7], "int64"),
        "LR_Scheduler": {"step_num": 7, "last_lr": 0.01},
    }
    fluid.save_dygraph(model, "./checkpoint/mnist_epoch0")
    fluid.save_dygraph(opt, "./checkpoint/mnist_epoch0")
    assert sorted(os.listdir("checkpoint")) == [
        "mnist_epoch0.pdopt",
        "mnist_epoch0.pdparams",
        "mnist_epoch0.pdsave",
    ]
    params, opt_dict = fluid.load_dygraph("./checkpoint/mnist_epoch0")
    np.testing.assert_array_equal(params["fc.weight"], model["fc.weight"].numpy())
    assert params["fc.bias"].dtype == np.float32
    assert opt_dict["LR_Scheduler"] == {"step_num": 7, "last_lr": 0.01}
    assert opt_dict["global_step"].dtype == np.int64 and opt_dict["global_step"][0] == 7
    assert fluid.dygraph.load_dygraph is fluid.load_dygraph if hasattr(fluid, "dygraph") else True
    fluid.save_dygraph(model, "only_model")
    p, o = fluid.load_dygraph("only_model.pdparams")
    assert o is None and set(p) == set(model)
    with pytest.raises(MissingVariableError, match="nope.pdparams"):
        fluid.load_dygraph("nope")
    with pytest.raises(TypeError, match="callback.*neither a tensor"):
        fluid.save_dygraph({"callback": print}, "bad")
    with pytest.raises(ValueError, match="empty"):
        fluid.save_dygraph({}, "bad")


def test_load_never_unpickles(tmp_path):
    """A pickle under a .pdparams name is refused without being executed."""
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    (tmp_path / "evil.pdparams").write_bytes(pickle.dumps({"w": Evil()}, protocol=2))
    with pytest.raises(CorruptFileError, match="pickle"):
        fluid.load_dygraph(str(tmp_path / "evil"))
    assert not marker.exists()


def test_corrupted_dygraph_file(tmp_path):
    fluid.save_dygraph({"w": _Param(np.ones(1000, "float32"))}, str(tmp_path / "m"))
    path = tmp_path / "m.pdparams"
    data = bytearray(path.read_bytes())
    data[-7] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptFileError, match=r"m\.pdparams.*'w'.*checksum"):
        fluid.load_dygraph(str(tmp_path / "m"))
    path.write_bytes(bytes(data[:200]))
    with pytest.raises(CorruptFileError, match="truncated"):
        fluid.load_dygraph(str(tmp_path / "m"))


def test_without_the_plugin_save_load_say_what_to_install(tmp_path):
    code = """
from oar import fluid
from oar.errors import MissingPluginError
for name in ["save_params", "load_persistables", "save_inference_model", "load_inference_model"]:
    try:
        getattr(fluid.io, name)
    except MissingPluginError as e:
        print("missing", name, e)
for name in ["save", "load", "save_dygraph", "load_dygraph"]:
    try:
        getattr(fluid, name)
    except MissingPluginError as e:
        print("missing", name, e)
"""
    r = run_py(code, tmp_path, {"OAR_DISABLE_PLUGINS": "io"})
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("missing")]
    assert len(lines) == 8, r.stdout
    assert all("pip install oar-io" in ln for ln in lines)
