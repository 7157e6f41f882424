"""Import time of ``from oar import fluid`` against ``import numpy`` (median of N fresh interpreters).

    python tools/import_time.py [--runs 5] [--no-pyc] [--python PY]

Each run is a new interpreter with ``-X importtime``; reported are the sum of
the top-level imports' cumulative times (wall clock, what the statement costs,
interpreter start-up excluded) and the child's CPU time (user + sys) minus
that of ``python -c pass``, which is steadier on a shared machine. ``--no-pyc`` compiles every module from
source (an empty ``PYTHONPYCACHEPREFIX``, nothing written), as a checkout run
with ``PYTHONDONTWRITEBYTECODE=1`` does; the default uses cached bytecode, as
an installed package does. The target: fluid <= numpy + 0.1 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile


def import_seconds(python: str, statement: str, no_pyc: bool) -> tuple:
    """(importtime's cumulative wall seconds, the child's CPU seconds) for one fresh run."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as empty:
        if no_pyc:
            env["PYTHONPYCACHEPREFIX"] = empty
        cmd = [python, "-X", "importtime"] + (["-B"] if no_pyc else []) + ["-c", statement]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    total = 0
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _self, cumulative, name = line[len("import time:") :].split("|")
        if cumulative.strip().isdigit() and not name.startswith("  ") and name.strip() != "site":
            total += int(cumulative)
    return total / 1e6, cpu


def main(argv: list | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-pyc", action="store_true", help="compile from source (no bytecode cache)")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args(argv)
    if not args.no_pyc:  # warm the bytecode cache first
        import_seconds(args.python, "from oar import fluid", False)
    res = {}
    for label, stmt in (
        ("pass", "pass"),
        ("numpy", "import numpy"),
        ("fluid", "from oar import fluid"),
    ):
        runs = [import_seconds(args.python, stmt, args.no_pyc) for _ in range(args.runs)]
        res[label] = tuple(statistics.median(r[i] for r in runs) for i in (0, 1))
    mode = "no bytecode cache" if args.no_pyc else "cached bytecode"
    wall_np, wall_fl = res["numpy"][0], res["fluid"][0]
    cpu_np, cpu_fl = (res[k][1] - res["pass"][1] for k in ("numpy", "fluid"))
    print(
        f"median of {args.runs} ({mode}): -X importtime: import numpy {wall_np * 1e3:.0f} ms, "
        f"from oar import fluid {wall_fl * 1e3:.0f} ms (numpy + {(wall_fl - wall_np) * 1e3:.0f} ms); "
        f"CPU: numpy {cpu_np * 1e3:.0f} ms, fluid {cpu_fl * 1e3:.0f} ms "
        f"(numpy + {(cpu_fl - cpu_np) * 1e3:.0f} ms)"
    )


if __name__ == "__main__":
    main()
