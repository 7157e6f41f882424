"""Run ``python -m oar.distributed.launch`` in a test, bounded in time; skip without MPI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .mpi_helpers import require_mpi

SCRIPTS = Path(__file__).parent / "scripts"


def run_launch(*args: str, timeout: float = 60, env: dict | None = None, check: bool = True):
    """``launch *args``; the CompletedProcess (asserts success when ``check``)."""
    require_mpi()
    full_env = dict(os.environ)
    full_env.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "oar.distributed.launch", "--print_config", "false", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
    )
    if check:
        assert proc.returncode == 0, (
            f"launch failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return proc
