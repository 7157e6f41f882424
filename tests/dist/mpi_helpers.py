"""Run a script under ``mpiexec -n N`` from the mpich wheel, bounded in time; skip without MPI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE_DIR = Path(__file__).parent


def require_mpi() -> str:
    """The ``mpiexec`` to use; skips the test when mpi4py or an MPI library is missing."""
    pytest.importorskip("mpi4py")
    try:
        from mpi4py import MPI  # noqa: F401
    except (ImportError, RuntimeError) as exc:
        pytest.skip(f"mpi4py has no MPI library: {exc}")
    local = Path(sys.executable).parent / "mpiexec"
    exe = str(local) if local.exists() else shutil.which("mpiexec")
    if not exe:
        pytest.skip("no mpiexec (pip install mpich)")
    return exe


def run_mpi(script: Path, n: int, *args: str, timeout: float = 120, env: dict | None = None):
    """Run ``script`` on ``n`` ranks; returns the CompletedProcess (fails the test on error)."""
    exe = require_mpi()
    full_env = dict(os.environ)
    full_env.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    # the scripts import helpers that live next to them (tests/dist/model.py)
    full_env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE_DIR)] + [p for p in [os.environ.get("PYTHONPATH")] if p]
    )
    full_env.update(env or {})
    proc = subprocess.run(
        [exe, "-n", str(n), sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
    )
    assert proc.returncode == 0, (
        f"mpiexec failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    )
    return proc
