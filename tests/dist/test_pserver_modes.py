"""Pserver jobs on loopback: a parameter sliced over both pservers, failures (async: test_pserver_fleet)."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("zmq")
pytest.importorskip("oar_dist")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oar import fluid
from pserver_helpers import HERE, seed_job

SCRIPT = HERE / "scripts" / "pserver_train.py"


def _run(tmp_path, timeout=90, trainers=2, **env):
    job = seed_job(tmp_path, trainers=trainers, script=SCRIPT, harness=False, **env)
    return job, job.wait(timeout)


def _reference(recs, hidden, lr=0.05, clip=None) -> dict:
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data(name="x", shape=[13], dtype="float32")
        y = fluid.layers.data(name="y", shape=[1], dtype="float32")
        h = fluid.layers.fc(input=x, size=hidden, act="tanh")
        pred = fluid.layers.fc(input=h, size=1)
        loss = fluid.layers.mean(fluid.layers.square_error_cost(input=pred, label=y))
        grad_clip = fluid.clip.GradientClipByGlobalNorm(clip) if clip else None
        fluid.optimizer.SGD(learning_rate=lr, grad_clip=grad_clip).minimize(loss)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    names = [p.name for p in main.global_block().all_parameters()]
    for n in names:
        scope.find_var(n).get_tensor().set(recs[0]["init/" + n], fluid.CPUPlace())
    steps = len(recs[0]["losses"])
    for i in range(steps):
        feed = {k: np.concatenate([r[f"feed/{i}/{k}"] for r in recs]) for k in ("x", "y")}
        exe.run(main, feed=feed, scope=scope)
    return {n: np.array(scope.find_var(n).get_tensor()) for n in names}


def test_sliced_parameter_sync_equals_one_process(tmp_path):
    job, rcs = _run(tmp_path, OAR_T_HIDDEN=1300, OAR_T_STEPS=8)
    assert all(rc == 0 for rc in rcs.values()), job.logs()
    recs = [np.load(tmp_path / f"trainer{t}.npz") for t in range(2)]
    assert "split_byref" in list(recs[0]["ops"]) and list(recs[0]["ops"])[-1] == "concat"
    ref = _reference(recs, 1300)
    for n, v in ref.items():
        np.testing.assert_array_equal(recs[0]["final/" + n], recs[1]["final/" + n])
        np.testing.assert_allclose(recs[0]["final/" + n], v, rtol=1e-5, atol=1e-6)


def test_global_norm_clipping_runs_on_the_trainer(tmp_path):
    """One trainer, fc_0.w_0 sliced over both pservers: equal to one process clipping too."""
    job, rcs = _run(tmp_path, trainers=1, OAR_T_HIDDEN=1300, OAR_T_STEPS=5, OAR_T_CLIP=0.05)
    assert all(rc == 0 for rc in rcs.values()), job.logs()
    rec = np.load(tmp_path / "trainer0.npz")
    ops = list(rec["ops"])
    assert "squared_l2_norm" in ops and "sgd" not in ops
    ref = _reference([rec], 1300, clip=0.05)
    unclipped = _reference([rec], 1300)
    for n, v in ref.items():
        np.testing.assert_allclose(rec["final/" + n], v, rtol=1e-5, atol=1e-6)
    assert not np.allclose(ref["fc_0.w_0"], unclipped["fc_0.w_0"])  # the clip did bind


def test_killed_trainer_stops_the_pservers_with_an_error(tmp_path):
    start = time.monotonic()
    # a job that waited for OAR_PSERVER_TIMEOUT would not end within the bound
    job, rcs = _run(
        tmp_path, timeout=100, OAR_T_STEPS=200, OAR_T_KILL_AT=3, OAR_PSERVER_TIMEOUT=120
    )
    assert time.monotonic() - start < 90
    for ip in ("127.0.0.1", "127.0.0.2"):
        assert rcs[f"pserver_{ip}"] != 0
        assert "trainer 1 disconnected before calling exe.close()" in job.log(f"pserver_{ip}")
    assert rcs["trainer1"] != 0 and rcs["trainer0"] != 0
    assert "pserver 127.0.0." in job.log("trainer0"), (rcs, job.logs())


@pytest.mark.parametrize("frozen", [False, True])
def test_killed_pserver_fails_the_trainers_with_a_clear_error(tmp_path, frozen):
    """Every trainer names the killed pserver, even one blocked on the other pserver's barrier.

    ``frozen``: trainer 1 is stopped (SIGSTOP) first, so trainer 0 waits on pserver 127.0.0.1's
    barrier when 127.0.0.2 dies, and trainer 1 resumes after 127.0.0.1 has stopped too (the
    order a loaded machine can produce)."""
    job = seed_job(tmp_path, script=SCRIPT, harness=False, OAR_T_STEPS=100000,
                   OAR_PSERVER_TIMEOUT=120)  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while "step 3 " not in job.log("trainer1"):
            assert time.monotonic() < deadline, job.logs()
            time.sleep(0.05)
        if frozen:
            job.procs["trainer1"].send_signal(signal.SIGSTOP)
            time.sleep(0.5)  # trainer 0 reaches a barrier it cannot pass
        start = time.monotonic()
        job.procs["pserver_127.0.0.2"].kill()
        if frozen:
            job.wait(60, names=["trainer0", "pserver_127.0.0.1"])
            job.procs["trainer1"].send_signal(signal.SIGCONT)
        rcs = job.wait(60, names=["trainer0", "trainer1"])
        # far below OAR_PSERVER_TIMEOUT: nobody waited for a reply that could not come
        assert time.monotonic() - start < 60
    finally:
        job.procs["trainer1"].send_signal(signal.SIGCONT)
        job.kill()
    for t in range(2):
        assert rcs[f"trainer{t}"] != 0
        log = job.log(f"trainer{t}")
        assert "127.0.0.2:" in log and "closed the connection" in log, job.logs()
