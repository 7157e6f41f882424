"""The small benchmark framework behind ``benchmarks/run.py``.

A benchmark module (``benchmarks/bench_*.py``) exposes ``BENCHMARKS``, a list
of :class:`Benchmark`. Each benchmark has contenders (oar, the numpy floor,
torch, paddle, ...), each given as a *factory*: a function that builds the
model once and returns a ``step()`` callable. ``step()`` runs one unit of work
(a training step, a 200-op program) and returns its result (a loss), which the
runner uses to check that every contender computes the same thing on the first
step. Contenders are timed interleaved in the same process, so ratios between
them are measured under the same machine load.
"""

from __future__ import annotations

import gc
import importlib
import statistics
import time
import tracemalloc
from dataclasses import dataclass, field

# typing, not collections.abc: this also runs on the Fluid oracle's Python 3.7
from typing import Any, Callable, Sequence  # noqa: UP035

import numpy as np

Step = Callable[[], Any]
Factory = Callable[[], Step]


class Unavailable(Exception):
    """Raised by a factory whose contender cannot run here (e.g. torch not installed)."""


def require(module: str) -> Any:
    """Import ``module`` or raise :class:`Unavailable` (for optional peers such as torch)."""
    try:
        return importlib.import_module(module)
    except Exception as exc:  # ImportError, or a broken install
        raise Unavailable(f"{module} not importable: {type(exc).__name__}: {exc}") from None


@dataclass
class Benchmark:
    """One measured workload and its contenders.

    ``contenders`` maps a contender name to its factory. The names ``oar``,
    ``numpy`` (the hand-written floor) and ``torch`` get ratio columns.
    ``ops_per_step`` > 1 adds a per-op time column (µs/op). ``targets`` are
    checked and printed, never asserted: ``{"oar/numpy": 1.15}`` (ratio of
    medians) or ``{"oar_us": 130}`` (oar µs per step) or ``{"oar_us_per_op": 3}``.
    ``check`` compares first-step results: ``None`` skips it, otherwise it is
    called as ``check(results: {name: value})`` and raises on mismatch; the
    default compares every result to the numpy floor's with ``rtol``/``atol``.
    ``memory`` asks the runner (with ``--memory``) for the peak traced
    allocation during one step of the contenders it names (``True`` = oar and
    numpy; tracemalloc cannot see torch's allocator).
    """

    name: str
    description: str
    contenders: dict[str, Factory]
    ops_per_step: int = 1
    targets: dict[str, float] = field(default_factory=dict)
    rtol: float = 1e-4
    atol: float = 1e-5
    check: Callable[[dict], None] | None | str = "default"
    memory: bool | tuple = False


def default_check(bench: Benchmark, results: dict) -> None:
    """Every contender's first-step result must match the numpy floor's (or the first one's)."""
    if not results:
        return
    ref_name = "numpy" if "numpy" in results else next(iter(results))
    ref = np.asarray(results[ref_name], dtype=np.float64)
    for name, value in results.items():
        got = np.asarray(value, dtype=np.float64)
        if got.shape != ref.shape and got.size == ref.size:
            got = got.reshape(ref.shape)
        if not np.allclose(got, ref, rtol=bench.rtol, atol=bench.atol):
            raise AssertionError(
                f"{bench.name}: contender '{name}' computed {got.ravel()[:4]} on the first step, "
                f"'{ref_name}' computed {ref.ravel()[:4]} (rtol={bench.rtol}, atol={bench.atol})"
            )


def as_float(value: Any) -> Any:
    """Turn a step result (numpy array, torch tensor, list of arrays) into numpy for checking."""
    if isinstance(value, (list, tuple)):
        value = value[0]
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value)


CLOCKS = {
    # wall time, as a user sees it
    "wall": time.perf_counter,
    # CPU time of this thread: on a machine shared with other busy processes it leaves
    # out the time the process spent preempted (only meaningful with --threads 1)
    "cpu": time.thread_time,
    # CPU time of every thread of this process: with --threads default, the cores' total
    # work (BLAS / numba / torch worker threads included), not the time a user waits
    "process": time.process_time,
}


def calibrate(step: Step, target_s: float, clock: Callable[[], float] = time.perf_counter) -> int:
    """How many calls of ``step`` take about ``target_s`` seconds (at least 1)."""
    n = 1
    while True:
        t0 = clock()
        for _ in range(n):
            step()
        dt = clock() - t0
        if dt >= target_s * 0.5 or n >= 1 << 20:
            return max(1, int(n * target_s / max(dt, 1e-9)))
        n *= 4


def time_interleaved(
    steps: dict[str, Step],
    repeats: int,
    target_s: float,
    warmup: int,
    clock: Callable[[], float] = time.perf_counter,
    settle_s: float = 0.0,
) -> dict:
    """Median (and min) seconds per call for each step, timing contenders round-robin.

    Round-robin means each repeat times every contender once, so a burst of load
    from other processes hits all of them instead of one. ``settle_s`` seconds of sleep
    before each repeat let the previous contender's thread pools stop spinning (OpenBLAS's
    and OpenMP's workers spin for up to ~0.1-0.2 s after their last call), so a contender
    is not timed against another one's idle threads.
    """
    for step in steps.values():
        for _ in range(warmup):
            step()
    numbers = {name: calibrate(step, target_s, clock) for name, step in steps.items()}
    samples: dict = {name: [] for name in steps}
    gc_was = gc.isenabled()
    for _ in range(repeats):
        for name, step in steps.items():
            n = numbers[name]
            if settle_s:
                time.sleep(settle_s)
            gc.collect()
            gc.disable()
            try:
                t0 = clock()
                for _ in range(n):
                    step()
                dt = clock() - t0
            finally:
                if gc_was:
                    gc.enable()
            samples[name].append(dt / n)
    return {
        name: {
            "median_s": statistics.median(s),
            "min_s": min(s),
            "number": numbers[name],
            "samples_s": s,
        }
        for name, s in samples.items()
    }


def peak_traced_bytes(step: Step) -> int:
    """Peak bytes allocated through Python/numpy allocators during one ``step()``.

    numpy reports its data buffers to tracemalloc, so this measures the
    temporaries of numpy-based contenders (oar, the numpy floor). Allocations
    made by other allocators (torch's) are invisible: use :func:`peak_rss_subprocess`.
    """
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        step()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return max(0, peak - base)


def peak_rss_subprocess(code: str, python: str | None = None, timeout: float = 300) -> int:
    """Peak resident memory (bytes) of a fresh interpreter running ``code``.

    For contenders whose allocations tracemalloc cannot see; subtract the peak of
    a baseline run (the same imports, no work) to get the workload's share.
    """
    import json
    import subprocess
    import sys

    wrapper = (
        code
        + "\nimport resource, json, sys\n"
        + "print('\\nPEAK_RSS_KB=' + json.dumps(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
    )
    out = subprocess.run(
        [python or sys.executable, "-c", wrapper],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    ).stdout
    kb = json.loads(out.rsplit("PEAK_RSS_KB=", 1)[1])
    return int(kb) * 1024


def pick(benchmarks: Sequence[Benchmark], names: Sequence[str]) -> list:
    """The benchmarks whose name contains one of ``names``, or equals one written ``=name``
    (all when ``names`` is empty)."""
    if not names:
        return list(benchmarks)

    def match(n: str, name: str) -> bool:
        return n[1:] == name if n.startswith("=") else n in name

    return [b for b in benchmarks if any(match(n, b.name) for n in names)]
