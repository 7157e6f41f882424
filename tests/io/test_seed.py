"""The seed guide's save/load samples, run as written (only the import line changed)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from iotest_util import HERE, run_py


def test_seed_linear_regression_end_to_end(tmp_path):
    """Train, save_inference_model, load in a new Scope under scope_guard, predict 9a+5b+2c+10d = 100."""
    r = subprocess.run(
        [sys.executable, os.path.join(HERE, "seed_linear_regression.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    m = re.search(r"9a\+5b\+2c\+10d=\[([-\d.e+]+)\]", r.stdout)
    assert m, r.stdout
    assert abs(float(m.group(1)) - 100.0) < 0.5
    assert sorted(os.listdir(tmp_path / "result")) == [
        ".oar-manifest.json",
        "__model__",
        "fc_0.b_0",
        "fc_0.w_0",
    ]


def test_seed_guide_snippets(tmp_path):
    """The save_params / load_params / save_persistables / load_persistables snippets of the guide."""
    code = """
from oar import fluid
x = fluid.layers.data(name="x", shape=[3], dtype="float32")
out = fluid.layers.fc(input=x, size=2)
exe = fluid.Executor(fluid.CPUPlace())
exe.run(fluid.default_startup_program())
param_path = "./my_paddle_model"
prog = fluid.default_main_program()
fluid.io.save_params(executor=exe, dirname=param_path, main_program=None)
fluid.io.load_params(executor=exe, dirname=param_path, main_program=prog)
path = "./models"
fluid.io.save_persistables(exe, path, prog)
startup_prog = fluid.default_startup_program()
exe.run(startup_prog)
fluid.io.load_persistables(exe, path, startup_prog)
main_prog = fluid.default_main_program()
import numpy as np
print(exe.run(main_prog, feed={"x": np.ones((1, 3), "float32")}, fetch_list=[out])[0].shape)
"""
    r = run_py(code, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "(1, 2)" in r.stdout
    assert sorted(os.listdir(tmp_path / "my_paddle_model")) == [
        ".oar-manifest.json",
        "fc_0.b_0",
        "fc_0.w_0",
    ]
