"""fleet.parameter_server end to end: train, checkpoint on every pserver, resume from it."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("zmq")
pytest.importorskip("oar_dist")
pytest.importorskip("oar_io")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oar import fluid
from pserver_helpers import HERE, Job, base_env, free_port

SCRIPT = HERE / "scripts" / "pserver_fleet.py"


def fleet_job(out: Path, trainers: int, **extra) -> Job:
    p0, p1 = free_port(), free_port()
    servers = [f"127.0.0.1:{p0}", f"127.0.0.1:{p1}"]
    common = dict(PADDLE_PSERVERS_IP_PORT_LIST=",".join(servers), PADDLE_TRAINERS_NUM=trainers)
    job = Job(out)
    for i, ep in enumerate(servers):
        env = base_env(
            out,
            TRAINING_ROLE="PSERVER",
            POD_IP="127.0.0.1",
            PADDLE_PORT=ep.split(":")[1],
            **common,
            **extra,
        )
        job.start(f"pserver{i}", [sys.executable, str(SCRIPT)], env)
    for t in range(trainers):
        env = base_env(out, TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=t, **common, **extra)
        job.start(f"trainer{t}", [sys.executable, str(SCRIPT)], env)
    return job


def test_fleet_sync_then_resume_from_the_checkpoint_async(tmp_path):
    ckpt = tmp_path / "ckpt"
    first = tmp_path / "first"
    first.mkdir()
    job = fleet_job(first, 2, OAR_T_STRATEGY="sync", OAR_T_SAVE=ckpt)
    rcs = job.wait(90)
    assert all(rc == 0 for rc in rcs.values()), job.logs()
    r0, r1 = (np.load(first / f"trainer{t}.npz") for t in range(2))
    for k in r0.files:
        if k.startswith("final/"):
            np.testing.assert_array_equal(r0[k], r1[k])
    saved = {p.name for p in ckpt.iterdir()}
    assert {"fc_0.w_0", "fc_1.w_0"} <= saved
    assert any("moment1" in n for n in saved)  # Adam's state came from the pservers
    second = tmp_path / "second"
    second.mkdir()
    job = fleet_job(second, 2, OAR_T_STRATEGY="async", OAR_T_RESUME=ckpt, OAR_T_STEPS=20)
    rcs = job.wait(90)
    assert all(rc == 0 for rc in rcs.values()), job.logs()
    for t in range(2):
        r = np.load(second / f"trainer{t}.npz")
        for k in r.files:
            if k.startswith("init/"):  # the resumed job starts where the first one ended
                np.testing.assert_array_equal(r[k], r0["final/" + k[5:]])
        # async: each trainer's gradients applied as they arrive; training goes on
        assert r["losses"][-5:].mean() < r0["losses"][:5].mean()


def test_fleet_geo_sgd_trains_locally_and_exchanges_every_few_steps(tmp_path):
    job = fleet_job(tmp_path, 2, OAR_T_STRATEGY="geo", OAR_T_STEPS=15)
    rcs = job.wait(90)
    assert all(rc == 0 for rc in rcs.values()), job.logs()
    r0, r1 = (np.load(tmp_path / f"trainer{t}.npz") for t in range(2))
    ops = list(r0["ops"])
    assert ops[-1] == "geo_sgd_communicate" and "adam" in ops and "send" not in ops
    for k in r0.files:
        if k.startswith("init/"):  # both start from the pservers' values
            np.testing.assert_array_equal(r0[k], r1[k])
    for r in (r0, r1):
        assert r["losses"][-5:].mean() < 0.7 * r["losses"][:5].mean(), r["losses"]


def test_fleet_geo_sgd_with_one_trainer_equals_local_training(tmp_path):
    """One trainer pushing every 3 steps: after step 6 the pservers hold exactly its values."""
    job = fleet_job(tmp_path, 1, OAR_T_STRATEGY="geo", OAR_T_STEPS=6)
    rcs = job.wait(90)
    assert all(rc == 0 for rc in rcs.values()), job.logs()
    r = np.load(tmp_path / "trainer0.npz")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data(name="x", shape=[13], dtype="float32")
        y = fluid.layers.data(name="y", shape=[1], dtype="float32")
        pred = fluid.layers.fc(input=fluid.layers.fc(input=x, size=8, act="tanh"), size=1)
        loss = fluid.layers.mean(fluid.layers.square_error_cost(input=pred, label=y))
        fluid.optimizer.Adam(learning_rate=0.05).minimize(loss)
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        exe.run(startup)
        names = [k[5:] for k in r.files if k.startswith("init/")]
        for n in names:
            scope.find_var(n).get_tensor().set(r["init/" + n], fluid.CPUPlace())
        rng = np.random.RandomState(10)
        w = np.random.RandomState(0).uniform(-1, 1, (13, 1)).astype("float32")
        for _ in range(6):
            xb = rng.uniform(-1, 1, (8, 13)).astype("float32")
            exe.run(main, feed={"x": xb, "y": xb.dot(w)})
        for n in names:
            got = np.array(scope.find_var(n).get_tensor())
            np.testing.assert_allclose(r["final/" + n], got, rtol=1e-5, atol=1e-6)


def test_role_makers_read_the_parameter_server_variables(monkeypatch):
    from oar.fluid.incubate.fleet.base import role_maker
    from oar.fluid.incubate.fleet.parameter_server.distribute_transpiler import FleetTranspiler

    servers = "127.0.0.1:7001,127.0.0.1:7002"
    monkeypatch.setenv("PADDLE_PSERVERS_IP_PORT_LIST", servers)
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "3")
    monkeypatch.setenv("TRAINING_ROLE", "PSERVER")
    monkeypatch.setenv("POD_IP", "127.0.0.1")
    monkeypatch.setenv("PADDLE_PORT", "7002")
    f = FleetTranspiler()
    f.init(role_maker.PaddleCloudRoleMaker())
    assert f.is_server() and f.server_index() == 1 and f.worker_num() == 3
    assert f.server_endpoints(to_string=True) == servers
    monkeypatch.setenv("TRAINING_ROLE", "TRAINER")
    monkeypatch.setenv("PADDLE_TRAINER_ID", "2")
    f.init(role_maker.PaddleCloudRoleMaker())
    assert f.is_worker() and f.worker_index() == 2 and not f.is_first_worker()
    monkeypatch.setenv("PADDLE_TRAINER_ID", "3")
    with pytest.raises(
        ValueError,
        match=r"PADDLE_TRAINER_ID must be in \[0, 3\) for PADDLE_TRAINERS_NUM=3, given 3",
    ):
        role_maker.PaddleCloudRoleMaker().generate_role()
    monkeypatch.setenv("TRAINING_ROLE", "PSERVER")
    monkeypatch.setenv("PADDLE_PORT", "9999")
    with pytest.raises(
        ValueError, match="POD_IP:PADDLE_PORT must be one of .* given '127.0.0.1:9999'"
    ):
        role_maker.PaddleCloudRoleMaker().generate_role()
    rm = role_maker.UserDefinedRoleMaker(
        current_id=0, role=role_maker.Role.SERVER, worker_num=2, server_endpoints=["a:1"]
    )
    f.init(rm)
    assert f.is_server() and f.server_num() == 1 and f.worker_num() == 2
    with pytest.raises(ValueError, match="server_endpoints must be a non-empty list"):
        role_maker.UserDefinedRoleMaker(worker_num=2)
