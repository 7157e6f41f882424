"""benchmarks/bench_dist.py still runs, and every configuration computes the same first step.

No timing is asserted (ratios belong to the benchmark's output): the script
itself fails when the first-step loss of 2 places, 2 BLAS threads or 2 MPI
processes differs from one place's, and when the bucketed allreduce is wrong.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("oar_dist")

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_dist.py"


def test_bench_dist_quick_runs_and_agrees():
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dist"))
    from mpi_helpers import require_mpi

    require_mpi()
    r = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    for line in ("bucketed / raw bandwidth", "2 places / 1 place throughput", "scaling efficiency"):
        assert line in r.stdout
