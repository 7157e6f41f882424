"""``launch --max_restarts``: after a killed rank the job restarts and resumes exactly."""

from __future__ import annotations

import pytest

pytest.importorskip("oar_dist")
pytest.importorskip("oar_io")

from .launch_helpers import SCRIPTS, run_launch

STEPS, KILL_AT = 6, 3


def _losses(path) -> dict:
    return dict(line.split() for line in path.read_text().splitlines())


def test_restarted_job_resumes_with_the_uninterrupted_losses(tmp_path):
    script = str(SCRIPTS / "restart_train.py")
    plain = tmp_path / "plain"
    plain.mkdir()
    run_launch("--nproc_per_node", "2", script, str(plain), str(STEPS), str(STEPS))
    work = tmp_path / "work"
    work.mkdir()
    proc = run_launch(
        "--nproc_per_node", "2", "--max_restarts", "1", "--log_dir", str(tmp_path / "logs"),
        script, str(work), str(STEPS), str(KILL_AT), timeout=90,
    )  # fmt: skip
    assert "rank 1 died without exiting" in proc.stderr
    assert "restarting the job (1 of 1 restarts)" in proc.stderr
    log1 = (tmp_path / "logs" / "workerlog.1").read_text()
    assert "======== restart 1 ========" in log1 and f"resumes at step {KILL_AT}" in log1
    for rank in (0, 1):
        expected = _losses(plain / f"losses.{rank}.0")
        assert len(expected) == STEPS
        first, second = _losses(work / f"losses.{rank}.0"), _losses(work / f"losses.{rank}.1")
        assert min(map(int, second)) <= KILL_AT  # resumed from a checkpoint, not from scratch
        assert min(map(int, second)) > 0
        resumed = {**first, **second}
        assert resumed == expected  # exactly: the same float reprs


def test_without_restarts_the_failure_ends_the_job(tmp_path):
    proc = run_launch(
        "--nproc_per_node", "2", str(SCRIPTS / "restart_train.py"), str(tmp_path), "4", "1",
        check=False,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "rank 1 died without exiting" in proc.stderr
    assert "restarting" not in proc.stderr
