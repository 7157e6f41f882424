"""The seed's dist_train.py (分布式训练快速开始) with 2 pservers and 2 trainers on loopback."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("zmq")
pytest.importorskip("oar_dist")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oar import fluid
from pserver_helpers import seed_job


def _steps(rec) -> int:
    return len({k.split("/")[1] for k in rec.files if k.startswith("feed/")})


def _reference(recs, lr=0.001) -> dict:
    """One process, the same network, each step on both trainers' batches (= averaged gradients)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        y = fluid.layers.data(name="y", shape=[1], dtype="float32")
        x = fluid.layers.data(name="x", shape=[13], dtype="float32")
        y_predict = fluid.layers.fc(input=x, size=1, act=None)
        loss = fluid.layers.mean(fluid.layers.square_error_cost(input=y_predict, label=y))
        fluid.optimizer.SGD(learning_rate=lr).minimize(loss)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    names = [p.name for p in main.global_block().all_parameters()]
    for n in names:
        scope.find_var(n).get_tensor().set(recs[0]["init/" + n], fluid.CPUPlace())
    for i in range(_steps(recs[0])):
        feed = {k: np.concatenate([r[f"feed/{i}/{k}"] for r in recs]) for k in ("x", "y")}
        exe.run(main, feed=feed, scope=scope)
    return {n: np.array(scope.find_var(n).get_tensor()) for n in names}


def test_seed_dist_train_sync_two_pservers_two_trainers(tmp_path):
    job = seed_job(tmp_path)
    rcs = job.wait(120)
    assert all(rc == 0 for rc in rcs.values()), job.logs()
    recs = [np.load(tmp_path / f"trainer{t}.npz") for t in range(2)]
    # both started from the pservers' values and took the same number of steps
    for k in recs[0].files:
        if k.startswith("init/"):
            np.testing.assert_array_equal(recs[0][k], recs[1][k])
    assert _steps(recs[0]) == _steps(recs[1]) == 300
    for r in recs:
        losses = r["losses"]
        assert losses[-10:].mean() < 0.6 * losses[:10].mean()
    ref = _reference(recs)
    for n, v in ref.items():
        np.testing.assert_array_equal(recs[0]["final/" + n], recs[1]["final/" + n])
        np.testing.assert_allclose(recs[0]["final/" + n], v, rtol=1e-5, atol=1e-6)
        assert np.abs(v - recs[0]["init/" + n]).max() > 1e-3  # training moved it
    assert "Epoch: 29, Batch: 9, loss:" in job.log("trainer0")
