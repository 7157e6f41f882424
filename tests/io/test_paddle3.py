"""Models and parameter files written by PaddlePaddle 2.x/3.x load and run in oar.

Needs a Python with ``paddlepaddle`` installed: this interpreter, or the one
named by ``OAR_PADDLE_PYTHON``. Skipped cleanly otherwise.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from oar import fluid

PADDLE_PY = os.environ.get("OAR_PADDLE_PYTHON") or (
    sys.executable if importlib.util.find_spec("paddle") else ""
)
pytestmark = pytest.mark.skipif(
    not PADDLE_PY, reason="paddlepaddle not installed (set OAR_PADDLE_PYTHON)"
)

WRITER = r"""
import json, os, numpy as np, paddle
paddle.enable_static()
paddle.seed(5)
main, start = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, start):
    x = paddle.static.data(name="x", shape=[-1, 4], dtype="float32")
    h = paddle.static.nn.fc(x, size=6, activation="relu")
    y = paddle.nn.functional.softmax(paddle.static.nn.fc(h, size=3))
exe = paddle.static.Executor(paddle.CPUPlace())
exe.run(start)
paddle.static.save_inference_model("m/model", [x], [y], exe, program=main)
paddle.static.save_vars(exe, "vars", main, vars=[v for v in main.list_vars() if v.persistable])
xv = np.linspace(-1, 1, 8).reshape(2, 4).astype("float32")
pred = exe.run(main, feed={"x": xv}, fetch_list=[y])[0]
json.dump({"pred": pred.tolist(), "version": paddle.__version__}, open("ref.json", "w"))
"""


def _run_paddle(script: str, cwd) -> None:
    """``script`` under real Paddle in ``cwd``, writing .pdmodel (ProgramDesc) rather than PIR .json."""
    env = dict(os.environ, FLAGS_enable_pir_api="0")
    r = subprocess.run(
        [PADDLE_PY, "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    if r.returncode != 0:
        pytest.fail(r.stderr[-3000:])


def test_paddle_pdmodel_and_vars_load_and_run(fresh, tmp_path):
    _run_paddle(WRITER, tmp_path)
    ref = json.load(open(tmp_path / "ref.json"))
    assert sorted(os.listdir(tmp_path / "m")) == ["model.pdiparams", "model.pdmodel"]
    exe = fluid.Executor(fluid.CPUPlace())
    xv = np.linspace(-1, 1, 8).reshape(2, 4).astype("float32")
    for args, kw in (
        (("m/model",), {}),
        (("m",), {}),
        (("m",), {"model_filename": "model.pdmodel", "params_filename": "model.pdiparams"}),
    ):
        with fluid.scope_guard(fluid.Scope()):
            prog, feeds, fetches = fluid.io.load_inference_model(*args, exe, **kw)
            out = exe.run(prog, feed={feeds[0]: xv}, fetch_list=fetches)[0]
        np.testing.assert_allclose(out, np.asarray(ref["pred"]), rtol=1e-5, atol=1e-6)
    state = fluid.io.load_program_state("vars")
    assert sorted(state) == ["fc_0.b_0", "fc_0.w_0", "fc_1.b_0", "fc_1.w_0"]
    assert state["fc_0.w_0"].shape == (4, 6)


READER = r"""
import json, numpy as np, paddle
paddle.enable_static()
exe = paddle.static.Executor(paddle.CPUPlace())
prog, feeds, fetches = paddle.static.load_inference_model("m/model", exe)
xv = np.linspace(-1, 1, 12).reshape(3, 4).astype("float32")
json.dump({"feeds": feeds, "pred": exe.run(prog, feed={feeds[0]: xv}, fetch_list=fetches)[0].tolist()},
          open("paddle_pred.json", "w"))
"""


def test_oar_model_runs_in_paddle(fresh, tmp_path):
    """save_inference_model(format="fluid", program_format="fluid_program") -> Paddle's load_inference_model."""
    main, startup = fresh
    x = fluid.layers.data(name="x", shape=[4], dtype="float32")
    y = fluid.layers.fc(fluid.layers.fc(x, size=5, act="relu"), size=2, act="softmax")
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    fluid.io.save_inference_model(
        "m",
        ["x"],
        [y],
        exe,
        model_filename="model.pdmodel",
        params_filename="model.pdiparams",
        format="fluid",
        program_format="fluid_program",
    )
    xv = np.linspace(-1, 1, 12).reshape(3, 4).astype("float32")
    want = exe.run(main, feed={"x": xv}, fetch_list=[y])[0]
    _run_paddle(READER, tmp_path)
    got = json.load(open(tmp_path / "paddle_pred.json"))
    assert got["feeds"] == ["x"]
    np.testing.assert_allclose(np.asarray(got["pred"]), want, rtol=1e-5, atol=1e-6)
