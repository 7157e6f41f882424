"""The benchmark suite still runs and every contender still computes the same first step.

No timing is asserted (timings belong to benchmarks/, as ratios); this guards
against the benchmarks rotting as the code moves. ``run.py`` checks that
oar's first-step loss agrees with the numpy floor's (and torch's) before timing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "run.py"


def test_quick_benchmarks_run_and_agree():
    r = subprocess.run(
        [sys.executable, str(RUN), "--quick", "dispatch", "fit_a_line"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "== dispatch" in r.stdout and "== fit_a_line" in r.stdout
    assert "target oar_us_per_op <= 3.0" in r.stdout and "target oar_us <= 130.0" in r.stdout


def test_pick_by_substring_or_exact_name():
    sys.path.insert(0, str(RUN.parent))
    try:
        from benchlib import Benchmark, pick
    finally:
        sys.path.remove(str(RUN.parent))
    benches = [Benchmark(name=n, description="", contenders={}) for n in ("mlp", "mlp_adam", "a")]
    assert [b.name for b in pick(benches, ["mlp"])] == ["mlp", "mlp_adam"]
    assert [b.name for b in pick(benches, ["=mlp"])] == ["mlp"]
    assert [b.name for b in pick(benches, ["=mlp", "a"])] == ["mlp", "mlp_adam", "a"]
    assert pick(benches, ["=ml"]) == []
