"""Single-machine incremental training (seed): save_persistables, then a fresh process resumes exactly."""

from __future__ import annotations

import json

from iotest_util import run_py

TRAIN = r"""
import json, sys
from oar import fluid
from iotest_util import batch, build_mlp
mode, fmt = sys.argv[1], sys.argv[2]
x, y, pred, avg = build_mlp(optimizer="adam")
exe = fluid.Executor(fluid.CPUPlace())
prog = fluid.default_main_program()
exe.run(fluid.default_startup_program())
losses = []
if mode == "resume":
    fluid.io.load_persistables(exe, "./models", prog, **({"filename": "ckpt"} if fmt == "combined" else {}))
    steps = range(5, 10)
else:
    steps = range(0, 10 if mode == "full" else 5)
for i in steps:
    losses.append(float(exe.run(prog, feed=batch(i), fetch_list=[avg])[0][0]))
if mode == "first":
    fluid.io.save_persistables(exe, "./models", prog, **({"filename": "ckpt"} if fmt == "combined" else {}))
print(json.dumps(losses))
"""


def _run(mode, fmt, cwd):
    r = run_py(f"import sys; sys.argv = ['x', {mode!r}, {fmt!r}]\n" + TRAIN, cwd)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_resume_in_fresh_process_matches_uninterrupted_run(tmp_path):
    full = _run("full", "files", tmp_path)
    first = _run("first", "files", tmp_path)
    resumed = _run("resume", "files", tmp_path)
    assert len(first) == len(resumed) == 5
    for a, b in zip(full, first + resumed):
        assert abs(a - b) <= 1e-6, (full, first + resumed)
    # the Adam accumulators matter: resuming without them would differ
    assert {"fc_0.w_0_moment1_0", "fc_0.w_0_beta1_pow_acc_0"} <= set(
        p.name for p in (tmp_path / "models").iterdir()
    )


def test_resume_from_combined_file(tmp_path):
    full = _run("full", "combined", tmp_path)
    first = _run("first", "combined", tmp_path)
    resumed = _run("resume", "combined", tmp_path)
    for a, b in zip(full, first + resumed):
        assert abs(a - b) <= 1e-6
