"""GeneralRoleMaker (shared-directory rendezvous) and MPISymetricRoleMaker (under mpiexec)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("oar_dist")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mpi_helpers import run_mpi

SCRIPT = Path(__file__).resolve().parent / "scripts" / "role_makers.py"


def _records(out: Path) -> list:
    recs = [json.loads(p.read_text()) for p in out.glob("*.json")]
    return sorted(recs, key=lambda r: r["id"])


def test_mpi_symetric_role_maker_pairs_a_worker_and_a_server_per_node(tmp_path):
    run_mpi(SCRIPT, 4, "mpi", str(tmp_path), timeout=90, env={"PADDLE_PORT": "7164"})
    recs = _records(tmp_path)
    assert [(r["id"], r["worker"], r["server"]) for r in recs] == [
        (0, True, False),
        (1, True, False),
        (100, False, True),
        (101, False, True),
    ]
    assert [r["first"] for r in recs] == [True, False, False, False]
    for r in recs:
        assert r["worker_num"] == 2
        assert [e.rsplit(":", 1)[1] for e in r["servers"]] == ["7164", "7165"]
        assert sorted(r["gathered"]) == [0, 1, 100, 101]
    assert recs[0]["sum"] == recs[1]["sum"] == [3.0, 3.0, 3.0]


def test_general_role_maker_meets_in_a_directory(tmp_path):
    base = dict(
        os.environ,
        PADDLE_PSERVERS_IP_PORT_LIST="127.0.0.1:7170,127.0.0.1:7171",
        PADDLE_TRAINER_ENDPOINTS="127.0.0.1:7180,127.0.0.1:7181",
    )
    roles = [("TRAINER", {"PADDLE_TRAINER_ID": "0"}), ("TRAINER", {"PADDLE_TRAINER_ID": "1"})]
    roles += [("PSERVER", {"PADDLE_PSERVER_ID": str(i)}) for i in range(2)]
    procs = [
        subprocess.Popen(
            [sys.executable, str(SCRIPT), "general", str(tmp_path)],
            env=dict(base, TRAINING_ROLE=role, **extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for role, extra in roles
    ]
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=60)[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        assert p.returncode == 0, outs[-1]
    recs = _records(tmp_path)
    assert [r["id"] for r in recs] == [0, 1, 100, 101]
    assert recs[0]["sum"] == recs[1]["sum"] == [3.0, 3.0, 3.0]
    assert all(r["gathered"] == [0, 1, 100, 101] for r in recs)
    assert recs[2]["servers"] == ["127.0.0.1:7170", "127.0.0.1:7171"]


def test_general_role_maker_without_a_path_says_so(monkeypatch):
    from oar.fluid.incubate.fleet.base import role_maker

    monkeypatch.setenv("TRAINING_ROLE", "TRAINER")
    monkeypatch.setenv("PADDLE_PSERVERS_IP_PORT_LIST", "127.0.0.1:7170")
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "2")
    monkeypatch.setenv("PADDLE_TRAINER_ID", "1")
    rm = role_maker.GeneralRoleMaker()
    assert rm.worker_index() == 1 and rm.worker_num() == 2 and not rm.is_first_worker()
    with pytest.raises(RuntimeError, match="GeneralRoleMaker\\(path=...\\)"):
        rm.barrier_worker()
    with pytest.raises(TypeError, match="unknown arguments \\['bogus'\\]"):
        role_maker.GeneralRoleMaker(bogus=1)
