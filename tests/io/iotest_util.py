"""Helpers for the io plugin tests (imported by name: conftest puts this folder on sys.path)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
from oar import fluid

HERE = os.path.dirname(os.path.abspath(__file__))
FLUID18 = os.environ.get("FLUID18_PYTHON", "")  # the Fluid 1.8.5 oracle (docs/oracle.md)


def build_mlp(optimizer: str = "sgd", seed: int = 1):
    """x[4] -> fc(8, relu) -> fc(1); square error; returns (x, y, pred, avg_cost)."""
    prog = fluid.default_main_program()
    prog.random_seed = seed
    fluid.default_startup_program().random_seed = seed
    x = fluid.layers.data(name="x", shape=[4], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    h = fluid.layers.fc(input=x, size=8, act="relu")
    pred = fluid.layers.fc(input=h, size=1)
    avg = fluid.layers.mean(fluid.layers.square_error_cost(input=pred, label=y))
    opt = (
        fluid.optimizer.Adam(learning_rate=0.01)
        if optimizer == "adam"
        else fluid.optimizer.SGD(0.05)
    )
    opt.minimize(avg)
    return x, y, pred, avg


def batch(i: int):
    rng = np.random.default_rng(100 + i)
    xv = rng.uniform(-1, 1, (8, 4)).astype("float32")
    yv = (xv @ np.array([[1.0], [-2.0], [3.0], [0.5]], dtype="float32") + 0.25).astype("float32")
    return {"x": xv, "y": yv}


def scope_array(name: str) -> np.ndarray:
    return np.array(fluid.global_scope().find_var(name).get_tensor())


def run_py(
    code: str, cwd, env_extra: dict | None = None, timeout: int = 60
) -> subprocess.CompletedProcess:
    env = dict(os.environ, **(env_extra or {}))
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
