"""oar-kernels-numba's start-up cost: the first training step with a cold JIT cache, with a
warm on-disk cache (a second process), and without the plugin.

Each measurement is a fresh process building the MLP 784-512-512-10 Adam program of
``bench_mlp_adam`` and timing its first ``exe.run`` (where the plugin imports numba and
compiles or loads its loops) and the fastest of the next five; the cold run gets an empty
``NUMBA_CACHE_DIR``, the warm run the same directory again. Run:
``python benchmarks/bench_numba_startup.py`` (``--repeat N`` alternates the warm and
no-plugin processes N times and keeps the best of each).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def worker() -> None:
    t0 = time.perf_counter()
    sys.path.insert(0, str(HERE.parent))
    from bench_mlp_adam import oar_step

    step = oar_step()
    t1 = time.perf_counter()
    step()
    t2 = time.perf_counter()
    laps = []
    for _ in range(5):
        s = time.perf_counter()
        step()
        laps.append(time.perf_counter() - s)
    import oar.api

    winner = oar.api.registries().kernels.lookup("adam", "cpu", "float32").plugin
    result = {
        "build_s": t1 - t0,
        "first_step_s": t2 - t1,
        "step_s": min(laps),
        "adam_kernel": winner,
        "numba_imported": "numba" in sys.modules,
    }
    print("RESULT " + json.dumps(result), flush=True)


def run(env_extra: dict) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "OAR_DISABLE_PLUGINS"}
    env.update(env_extra)
    t0 = time.perf_counter()
    res = subprocess.run(
        [sys.executable, str(HERE), "--worker"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    wall = time.perf_counter() - t0
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("RESULT ")]
    if res.returncode or not lines:
        raise RuntimeError(f"worker failed:\n{res.stderr[-3000:]}")
    return dict(json.loads(lines[0][7:]), process_s=wall)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.worker:
        worker()
        return
    with tempfile.TemporaryDirectory() as cache:
        rows = {"cold cache": run({"NUMBA_CACHE_DIR": cache})}
        best: dict = {}
        for _ in range(args.repeat):
            for name, extra in (
                ("warm cache", {"NUMBA_CACHE_DIR": cache}),
                ("no plugin", {"OAR_DISABLE_PLUGINS": "kernels_numba"}),
            ):
                r = run(extra)
                if name not in best or r["first_step_s"] < best[name]["first_step_s"]:
                    best[name] = r
        rows.update(best)
    print(f"load average {os.getloadavg()[0]:.1f}; MLP 784-512-512-10 Adam, batch 128")
    print(f"  {'':12s} {'process':>9s} {'build':>8s} {'1st step':>9s} {'step':>8s}  adam kernel")
    for name, r in rows.items():
        print(
            f"  {name:12s} {r['process_s']:8.2f}s {r['build_s']:7.2f}s {r['first_step_s']:8.3f}s"
            f" {r['step_s'] * 1e3:6.2f}ms  {r['adam_kernel']}"
        )


if __name__ == "__main__":
    main()
