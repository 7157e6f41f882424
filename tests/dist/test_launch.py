"""``python -m oar.distributed.launch``: rank variables, workerlog.N, failures named with their tail."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

pytest.importorskip("oar_dist")

from oar_dist.launch import JobSpec, build_parser, make_spec, mpiexec_command

from .launch_helpers import SCRIPTS, run_launch


def test_ranks_get_paddle_variables_and_workerlogs(tmp_path):
    out = tmp_path / "env"
    logs = tmp_path / "logs"
    run_launch(
        "--nproc_per_node", "2", "--started_port", "7000", "--log_dir", str(logs),
        str(SCRIPTS / "launch_env.py"), str(out), "--flag-for-the-script",
    )  # fmt: skip
    eps = "127.0.0.1:7000,127.0.0.1:7001"
    for rank in (0, 1):
        got = json.loads((tmp_path / f"env.{rank}.json").read_text())
        assert got["env"] == {
            "PADDLE_TRAINER_ID": str(rank),
            "PADDLE_TRAINERS_NUM": "2",
            "PADDLE_TRAINER_ENDPOINTS": eps,
            "PADDLE_CURRENT_ENDPOINT": eps.split(",")[rank],
            "FLAGS_selected_gpus": str(rank),
            "OAR_FALLBACK_DEVICE": "cpu",
        }
        assert got["argv"][1:] == [str(out), "--flag-for-the-script"]
        assert f"rank {rank} says hello" in (logs / f"workerlog.{rank}").read_text()


def test_selected_gpus_pick_the_processes_and_their_devices(tmp_path):
    out = tmp_path / "env"
    run_launch("--selected_gpus", "3,5", str(SCRIPTS / "launch_env.py"), str(out))
    devs = [json.loads((tmp_path / f"env.{r}.json").read_text())["env"] for r in (0, 1)]
    assert [d["FLAGS_selected_gpus"] for d in devs] == ["3", "5"]


def test_print_config_shows_the_job(tmp_path):
    proc = run_launch(
        "--nproc_per_node", "1", str(SCRIPTS / "launch_env.py"), str(tmp_path / "e"), check=True
    )
    assert "Configuration Arguments" not in proc.stdout  # --print_config false
    cmd = [sys.executable, "-m", "oar.distributed.launch", "--nproc_per_node", "1"]
    proc = subprocess.run(
        [*cmd, str(SCRIPTS / "launch_env.py"), str(tmp_path / "e")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Configuration Arguments" in proc.stdout and "trainers_num: 1" in proc.stdout


def test_failing_rank_stops_the_job_with_its_log_tail(tmp_path):
    logs = tmp_path / "logs"
    proc = run_launch(
        "--nproc_per_node", "2", "--log_dir", str(logs),
        str(SCRIPTS / "launch_env.py"), str(tmp_path / "e"), "raise", check=False,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "rank 1 exited with code 1" in proc.stderr
    assert "workerlog.1" in proc.stderr
    assert "ValueError: rank 1 cannot go on" in proc.stderr  # the tail
    assert "launch_worker" not in (logs / "workerlog.1").read_text()  # the script's traceback


def test_killed_rank_is_named_and_the_job_ends_at_once(tmp_path):
    t0 = time.monotonic()
    proc = run_launch(
        "--nproc_per_node", "2", "--log_dir", str(tmp_path / "logs"),
        str(SCRIPTS / "launch_env.py"), str(tmp_path / "e"), "kill",
        check=False, timeout=100, env={"OAR_COLLECTIVE_TIMEOUT": "120"},
    )  # fmt: skip
    elapsed = time.monotonic() - t0
    assert proc.returncode != 0
    assert "rank 1 died without exiting" in proc.stderr, proc.stderr
    assert elapsed < 90  # the launcher saw the death: rank 0's watchdog (120 s) did not end it


def test_rank_waiting_on_a_hung_peer_fails_within_the_collective_timeout(tmp_path):
    t0 = time.monotonic()
    proc = run_launch(
        "--nproc_per_node", "2", "--log_dir", str(tmp_path / "logs"),
        str(SCRIPTS / "launch_env.py"), str(tmp_path / "e"), "hang",
        check=False, timeout=60, env={"OAR_COLLECTIVE_TIMEOUT": "2"},
    )  # fmt: skip
    elapsed = time.monotonic() - t0
    assert proc.returncode != 0
    # the waiting rank's watchdog ends the job (MPI_Abort) naming itself and the collective
    assert "rank 0 " in proc.stderr.splitlines()[0] or "also rank 0 " in proc.stderr, proc.stderr
    assert "rank 0 of 2 waited more than 2 s in allreduce" in proc.stderr, proc.stderr
    assert elapsed < 30


def _spec(*argv: str) -> JobSpec:
    return make_spec(build_parser().parse_args([*argv, __file__]))


def test_several_nodes_go_through_mpis_host_list():
    spec = _spec("--cluster_node_ips", "10.0.0.1,10.0.0.2", "--node_ip", "10.0.0.1",
                 "--nproc_per_node", "2", "--started_port", "6000")  # fmt: skip
    assert spec.nranks == 4
    assert spec.endpoints == ["10.0.0.1:6000", "10.0.0.1:6001", "10.0.0.2:6000", "10.0.0.2:6001"]
    cmd = mpiexec_command(spec, "mpiexec")
    assert cmd[:6] == [
        "mpiexec",
        "-disable-auto-cleanup",
        "-hosts",
        "10.0.0.1:2,10.0.0.2:2",
        "-n",
        "4",
    ]
    assert cmd[-1] == __file__


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--node_ip", "10.9.9.9"], "--node_ip 10.9.9.9 is not one of --cluster_node_ips"),
        (["--selected_gpus", "0,1", "--nproc_per_node", "3"], "does not match the 2 ids"),
        (["--selected_gpus", "a,b"], "must be device ids"),
        (["--max_restarts", "-1"], "--max_restarts must be >= 0"),
        (["--started_port", "70000"], "--started_port must be a port number"),
        (["--started_port", "65535", "--nproc_per_node", "2"], "65535..65536, past 65535"),
    ],
)
def test_bad_flags_say_what_is_wrong(argv, message):
    from oar_dist.launch import LaunchError

    with pytest.raises(LaunchError, match=message):
        _spec(*argv)


def test_sigterm_is_forwarded_and_the_ranks_stop(tmp_path):
    import os
    import signal

    from .mpi_helpers import require_mpi

    require_mpi()
    logs = tmp_path / "logs"
    proc = subprocess.Popen(
        [sys.executable, "-m", "oar.distributed.launch", "--print_config", "false",
         "--nproc_per_node", "2", "--log_dir", str(logs),
         str(SCRIPTS / "launch_env.py"), str(tmp_path / "e"), "hang"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not all((tmp_path / f"e.{r}.json").exists() for r in (0, 1)):
            assert time.monotonic() < deadline and proc.poll() is None, "ranks did not start"
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM
    assert f"stopped by signal {int(signal.SIGTERM)}" in err
    # no rank is left running the script (they got the signal too; allow them a moment)
    deadline = time.monotonic() + 30
    while True:
        leftover = [p for p in os.listdir("/proc") if p.isdigit() and str(tmp_path) in _cmdline(p)]
        if not leftover or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not leftover, [_cmdline(p) for p in leftover]


def _cmdline(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _fake_mpiexec(tmp_path, version_text: str) -> str:
    path = tmp_path / "mpiexec"
    path.write_text(f"#!/bin/sh\necho '{version_text}'\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize(
    ("text", "flavor"),
    [
        ("HYDRA build details:\n    Version: 4.2.0", "mpich"),
        (
            "mpiexec (OpenRTE) 4.1.2\nReport bugs to http://www.open-mpi.org/community/help/",
            "openmpi",
        ),
        ("mpirun (Open MPI) 5.0.3", "openmpi"),
        ("something else 1.0", "unknown"),
    ],
)
def test_mpiexec_flavor_is_read_from_its_version(tmp_path, text, flavor):
    from oar_dist.launch import mpiexec_flavor

    assert mpiexec_flavor(_fake_mpiexec(tmp_path, text)) == flavor


def test_open_mpis_mpiexec_on_path_is_refused_with_the_fix(tmp_path, monkeypatch):
    """The launcher's Hydra flags make Open MPI's mpiexec fail with 'unknown option'."""
    import oar_dist.launch as launch

    fake = _fake_mpiexec(tmp_path, "mpiexec (OpenRTE) 4.1.2")
    monkeypatch.setattr(launch.sys, "executable", str(tmp_path / "venv" / "bin" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(launch.LaunchError, match=r"Open MPI's mpiexec.*pip install mpich mpi4py"):
        launch.find_mpiexec()
    _fake_mpiexec(tmp_path, "HYDRA build details:")
    assert launch.find_mpiexec() == fake
