"""Run oar's benchmarks: ``python benchmarks/run.py [names...] [--json out.json] [--quick]``.

Discovers ``benchmarks/bench_*.py``, runs each benchmark's contenders in this
process (first-step results checked for agreement, warm-up, interleaved
repeats, median time per step) and prints per-step times and the ratios
oar / numpy floor and oar / torch. See ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path


def _threads_from_argv(argv: list) -> str:
    for i, a in enumerate(argv):
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
    return "1"


# BLAS threads must be fixed before numpy is imported. One thread by default:
# on a shared machine, spinning BLAS threads make timings swing tenfold.
# ``--threads default`` leaves every library at its own default (what a user gets:
# OpenBLAS and torch one thread per core); ``--threads 1,default`` runs this script once
# per setting, each in a fresh process (thread pools are fixed at start-up).
THREADS = _threads_from_argv(sys.argv)
#: seconds of rest before each timed repeat when libraries run several threads: the previous
#: contender's spinning pool workers (OpenBLAS's, torch's OpenMP) would otherwise take a core
SETTLE_S = 0.25
if THREADS != "default" and "," not in THREADS:
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = THREADS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benchlib import (  # noqa: E402
    CLOCKS,
    Benchmark,
    Unavailable,
    as_float,
    default_check,
    peak_traced_bytes,
    pick,
    time_interleaved,
)


def discover(only_modules: list | None = None) -> list:
    """Every ``Benchmark`` in ``benchmarks/bench_*.py``, in file order."""
    out = []
    for path in sorted(HERE.glob("bench_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = mod
        spec.loader.exec_module(mod)
        for b in getattr(mod, "BENCHMARKS", ()):
            if not isinstance(b, Benchmark):
                raise TypeError(
                    f"{path.name}: BENCHMARKS holds a {type(b).__name__}, not a Benchmark"
                )
            out.append(b)
    return out


def _fmt_time(s: float) -> str:
    us = s * 1e6
    if us < 1000:
        return f"{us:9.1f} µs"
    return f"{us / 1000:9.2f} ms"


def _fmt_bytes(n: int) -> str:
    return f"{n / 2**20:8.2f} MiB"


def run_one(bench: Benchmark, args) -> dict:
    steps = {}
    skipped = {}
    for name, factory in bench.contenders.items():
        try:
            steps[name] = factory()
        except Unavailable as exc:
            skipped[name] = str(exc)
    first = {}
    for name, step in steps.items():
        first[name] = as_float(step())
    if bench.check == "default":
        default_check(bench, first)
    elif bench.check is not None:
        bench.check(first)
    repeats = args.repeats or (3 if args.quick else 7)
    target = args.target_s or (0.02 if args.quick else 0.1)
    timing = time_interleaved(
        steps,
        repeats,
        target,
        warmup=2 if args.quick else 5,
        clock=CLOCKS[args.clock],
        settle_s=0.0 if THREADS == "1" or args.quick else SETTLE_S,
    )
    memory = {}
    if args.memory and bench.memory:
        which = ("oar", "numpy") if bench.memory is True else tuple(bench.memory)
        for name, step in steps.items():
            if name in which:
                memory[name] = peak_traced_bytes(step)
    if args.profile:
        _profile(bench.name, steps, args.profile)
    ratios, targets = _ratios_and_targets(bench, timing, memory)
    return {
        "name": bench.name,
        "description": bench.description,
        "ops_per_step": bench.ops_per_step,
        "first_step_result": {n: v.ravel()[:4].tolist() for n, v in first.items()},
        "timing": timing,
        "ratios": ratios,
        "memory_peak_bytes": memory,
        "targets": targets,
        "skipped": skipped,
    }


def _ratios_and_targets(bench: Benchmark, timing: dict, memory: dict) -> tuple:
    """oar's ratios to the numpy floor and torch (time, and memory where measured), and the
    benchmark's targets checked against them."""
    med = {n: t["median_s"] for n, t in timing.items()}
    ratios = {}
    for base in ("numpy", "torch"):
        if "oar" in med and base in med:
            ratios[f"oar/{base}"] = med["oar"] / med[base]
    if "oar" in memory and "numpy" in memory and memory["numpy"]:
        ratios["oar_mem/numpy_mem"] = memory["oar"] / memory["numpy"]
    targets = {}
    for key, limit in bench.targets.items():
        if key == "oar_us":
            value = med.get("oar", float("nan")) * 1e6
        elif key == "oar_us_per_op":
            value = med.get("oar", float("nan")) * 1e6 / bench.ops_per_step
        else:
            value = ratios.get(key, float("nan"))
        targets[key] = {"limit": limit, "value": value, "met": value <= limit}
    return ratios, targets


def _profile(name: str, steps: dict, top: int, contender: str = "oar") -> None:
    """cProfile ``top`` functions (by own time) of the oar contender's step, for optimising."""
    import cProfile
    import pstats

    step = steps.get(contender)
    if step is None:
        return
    prof = cProfile.Profile()
    prof.enable()
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < 0.5 or n < 3:
        step()
        n += 1
    prof.disable()
    print(f"\n-- profile of {name}/{contender}: {n} steps, top {top} by own time")
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def print_result(res: dict) -> None:
    print(f"\n== {res['name']}: {res['description']}")
    med = {n: t["median_s"] for n, t in res["timing"].items()}
    per_op = res["ops_per_step"] > 1
    head = f"  {'contender':<10} {'median/step':>12} {'min/step':>12}"
    if per_op:
        head += f" {'µs/op':>8}"
    head += f" {'x numpy':>8} {'x torch':>8}"
    if res["memory_peak_bytes"]:
        head += f" {'peak mem':>12}"
    print(head)
    for name, t in res["timing"].items():
        line = f"  {name:<10} {_fmt_time(t['median_s']):>12} {_fmt_time(t['min_s']):>12}"
        if per_op:
            line += f" {t['median_s'] * 1e6 / res['ops_per_step']:8.2f}"
        for base in ("numpy", "torch"):
            line += f" {med[name] / med[base]:8.2f}" if base in med else f" {'-':>8}"
        if res["memory_peak_bytes"]:
            m = res["memory_peak_bytes"].get(name)
            line += f" {_fmt_bytes(m) if m is not None else '-':>12}"
        print(line)
    for name, why in res["skipped"].items():
        print(f"  {name:<10} skipped: {why}")
    for key, t in res["targets"].items():
        if t["value"] != t["value"]:  # nan: oar (or the ratio's base) did not run
            print(f"  target {key} <= {t['limit']}: n/a")
            continue
        status = "met" if t["met"] else "NOT MET"
        print(f"  target {key} <= {t['limit']}: {t['value']:.3f} ({status})")


def _run_per_thread_setting(settings: list, argv: list | None) -> int:
    """``--threads 1,default``: this script once per setting, each in a fresh process."""
    import subprocess

    rest = list(sys.argv[1:] if argv is None else argv)
    out = []
    skip = False
    for a in rest:  # drop the --threads option, keep everything else
        if skip:
            skip = False
            continue
        if a == "--threads":
            skip = True
            continue
        if not a.startswith("--threads="):
            out.append(a)
    rc = 0
    for setting in settings:
        extra = []
        if "--json" in out:  # one JSON file per setting: out.json -> out.threads-1.json
            i = out.index("--json")
            stem, _, ext = out[i + 1].rpartition(".")
            extra = list(out)
            extra[i + 1] = f"{stem or ext}.threads-{setting}.{ext if stem else 'json'}"
        print(f"\n######## --threads {setting}", flush=True)
        cmd = [sys.executable, __file__, *(extra or out), "--threads", setting]
        rc = max(rc, subprocess.run(cmd, timeout=3600).returncode)
    return rc


def main(argv: list | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", help="run only benchmarks whose name contains one of these")
    p.add_argument("--json", help="write all results to this JSON file")
    p.add_argument("--quick", action="store_true", help="fewer, shorter repeats (a smoke run)")
    p.add_argument(
        "--memory", action="store_true", help="also measure peak traced memory of one step"
    )
    p.add_argument(
        "--repeats", type=int, help="timed repeats per contender (default 7; 3 with --quick)"
    )
    p.add_argument(
        "--target-s", type=float, help="seconds per timed repeat (default 0.1; 0.02 with --quick)"
    )
    p.add_argument(
        "--threads",
        default="1",
        help="BLAS / torch threads: a number (default 1), 'default' (each library's own "
        "default, one per core), or a comma list such as '1,default' (one run per setting)",
    )
    p.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall = time.perf_counter (default); cpu = this thread's CPU time, "
        "steadier on a shared machine (1 thread only); process = CPU time of all threads",
    )
    p.add_argument(
        "--profile",
        type=int,
        metavar="N",
        default=0,
        help="also cProfile the oar contender and print its top N functions",
    )
    p.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = p.parse_args(argv)
    if "," in args.threads:
        return _run_per_thread_setting(args.threads.split(","), argv)
    benches = pick(discover(), args.names)
    if args.list:
        for b in benches:
            print(f"{b.name:<24} {b.description}  [{', '.join(b.contenders)}]")
        return 0
    if not benches:
        print(f"no benchmark matches {args.names}", file=sys.stderr)
        return 2
    env = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "threads": THREADS,
        "clock": args.clock,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    print(
        f"python {env['python']} on {env['platform']}, {env['cpus']} cpus, load {env['loadavg']}, "
        f"{THREADS} BLAS/torch thread(s), {args.clock} clock"
    )
    try:
        import torch

        if THREADS != "default":
            torch.set_num_threads(int(THREADS))
        env["torch_threads"] = torch.get_num_threads()
    except ImportError:
        pass
    results = []
    failed = 0
    for b in benches:
        try:
            res = run_one(b, args)
        except Exception:
            failed += 1
            print(f"\n== {b.name}: FAILED")
            traceback.print_exc()
            results.append({"name": b.name, "error": traceback.format_exc()})
            continue
        print_result(res)
        results.append(res)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"env": env, "results": results}, indent=1, default=float)
        )
        print(f"\nwrote {args.json}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
