"""``fluid.profiler``: per-op timings of static and dygraph runs, a report and a Chrome trace.

While profiling is on, the Executor builds profiled plans (every kernel call
timed: see ``executor/profiled_plan.py``) and the dygraph tracer's op entry
points are swapped for timed ones. When it is off nothing is wrapped: the
Executor compares one module attribute per run (``oar.flags.PROFILE_OPS``)
and dygraph runs the tracer's own methods, so the cost of the profiler when
off is nil.

``stop_profiler`` prints Fluid's "Event Summary" table (calls, total, min, max,
ave, ratio per op type, milliseconds) and writes ``profile_path`` as Chrome
trace JSON (open it in ``chrome://tracing`` or https://ui.perfetto.dev), one
complete event per op run. (Fluid 1.8.5 writes a protobuf there that its
``tools/timeline.py`` converts to the same kind of JSON.)
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

from oar import flags as _flags
from oar.errors import ArgumentError, DeviceUnavailableError

__all__ = ["cuda_profiler", "reset_profiler", "profiler", "start_profiler", "stop_profiler"]

_STATES = ("CPU", "GPU", "All")
_SORT_KEYS = (None, "calls", "total", "max", "min", "ave")
_lock = threading.Lock()
_events: list = []  # (op type, start ns, end ns, thread id)
_threads: dict = {}  # thread ident -> index in the report (thread0, thread1...)
_origin_ns = 0
_saved: dict = {}


def record(op_type: str, start_ns: int, end_ns: int) -> None:
    """Add one op run (the profiled plans and the dygraph hook call this)."""
    ident = threading.get_ident()
    with _lock:
        tid = _threads.setdefault(ident, len(_threads))
        _events.append((op_type, start_ns, end_ns, tid))


def is_profiler_enabled() -> bool:
    return _flags.PROFILE_OPS


def start_profiler(state: str, tracer_option: str = "Default") -> None:
    """Start collecting per-op timings (``state``: 'CPU', 'GPU' or 'All')."""
    if state not in _STATES:
        raise ValueError("The state must be 'CPU' or 'GPU' or 'All'.")
    if tracer_option not in ("Default", "OpDetail", "AllOpDetail"):
        raise ValueError("tracer option must be 'Default', 'OpDetail', 'AllOpDetail'.")
    if _flags.PROFILE_OPS:
        return
    global _origin_ns
    reset_profiler()
    _origin_ns = time.perf_counter_ns()
    _flags.PROFILE_OPS = True
    _hook_dygraph()


def stop_profiler(sorted_key: str | None = None, profile_path: str = "/tmp/profile") -> None:
    """Stop, print the per-op table sorted by ``sorted_key`` and write the Chrome trace."""
    if sorted_key not in _SORT_KEYS:
        raise ValueError(
            "The sorted_key must be None or in 'calls', 'total', 'max', 'min' and 'ave'"
        )
    if not _flags.PROFILE_OPS:
        return
    _flags.PROFILE_OPS = False
    _unhook_dygraph()
    with _lock:
        events = list(_events)
    print(report(events, sorted_key))
    write_chrome_trace(events, profile_path)


def reset_profiler() -> None:
    """Forget the timings collected so far."""
    with _lock:
        _events.clear()
        _threads.clear()


@contextlib.contextmanager
def profiler(
    state: str,
    sorted_key: str | None = None,
    profile_path: str = "/tmp/profile",
    tracer_option: str = "Default",
) -> Iterator[None]:
    """``with profiler.profiler('CPU', 'total', '/tmp/profile'):`` profile the runs inside."""
    start_profiler(state, tracer_option)
    try:
        yield
    finally:
        stop_profiler(sorted_key, profile_path)


@contextlib.contextmanager
def cuda_profiler(output_file: str, output_mode: str | None = None, config: Any = None):
    """NVIDIA's profiler around the block: needs the CUDA device plugin and a GPU."""
    if output_mode not in (None, "kvp", "csv"):
        raise ArgumentError("cuda_profiler", "output_mode must be 'kvp' or 'csv'")
    from oar.places import is_compiled_with_cuda

    if not is_compiled_with_cuda():
        raise DeviceUnavailableError(
            "cuda_profiler: no CUDA device is available (the CUDA profiler needs "
            "pip install oar-kernels-cuda and a GPU); use fluid.profiler.profiler('CPU') instead"
        )
    raise DeviceUnavailableError(
        "cuda_profiler: the CUDA plugin does not expose NVIDIA's profiler; "
        "use fluid.profiler.profiler('All') or nsys around the whole process"
    )


# --- the report ------------------------------------------------------------------------------------
def summarize(events: list) -> list:
    """``[(thread, op type, calls, total, min, max)]`` in ms, in order of first appearance."""
    rows: dict = {}
    for op_type, t0, t1, tid in events:
        ms = (t1 - t0) / 1e6
        row = rows.get((tid, op_type))
        if row is None:
            rows[(tid, op_type)] = [tid, op_type, 1, ms, ms, ms]
        else:
            row[2] += 1
            row[3] += ms
            row[4] = min(row[4], ms)
            row[5] = max(row[5], ms)
    return [tuple(r) for r in rows.values()]


_KEYS = {
    "calls": lambda r: r[2],
    "total": lambda r: r[3],
    "max": lambda r: r[5],
    "min": lambda r: r[4],
    "ave": lambda r: r[3] / r[2],
}
_ORDER_TEXT = {
    None: "event first end time",
    "calls": "number of calls",
    "total": "total time",
    "max": "max time",
    "min": "min time",
    "ave": "average time",
}


def report(events: list, sorted_key: str | None = None) -> str:
    """Fluid's profiling report: totals, then one line per (thread, op type)."""
    rows = summarize(events)
    if sorted_key is not None:
        # descending within each thread, threads in order (as Fluid sorts "in the same thread")
        rows.sort(key=lambda r: (r[0], -_KEYS[sorted_key](r)))
    total = sum(r[3] for r in rows)
    lines = [
        "",
        "------------------------->     Profiling Report     <-------------------------",
        "",
        "Place: CPU",
        "Time unit: ms",
        f"Sorted by {_ORDER_TEXT[sorted_key]} in descending order in the same thread",
        "",
        f"Total time: {total:g}",
        "",
        "-------------------------       Event Summary       -------------------------",
        "",
        f"{'Event':<37}{'Calls':<12}{'Total':<12}{'Min.':<12}{'Max.':<12}{'Ave.':<12}Ratio.",
    ]
    for tid, op_type, calls, tot, lo, hi in rows:
        ratio = tot / total if total else 0.0
        lines.append(
            f"{f'thread{tid}::{op_type}':<37}{calls:<12}{tot:<12.6g}{lo:<12.6g}{hi:<12.6g}"
            f"{tot / calls:<12.6g}{ratio:.6g}"
        )
    return "\n".join(lines) + "\n"


def write_chrome_trace(events: list, path: str) -> None:
    """One complete ("X") event per op run, microseconds from the profiler's start."""
    trace = {
        "traceEvents": [
            {
                "name": op_type,
                "cat": "Op",
                "ph": "X",
                "ts": (t0 - _origin_ns) / 1e3,
                "dur": (t1 - t0) / 1e3,
                "pid": 0,
                "tid": tid,
            }
            for op_type, t0, t1, tid in events
        ],
        "displayTimeUnit": "ms",
    }
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(trace, f)
    os.replace(tmp, path)


# --- dygraph: swap the tracer's op entry points while profiling ------------------------------------
def _hook_dygraph() -> None:
    from oar.dygraph.tracer import Tracer

    clock = time.perf_counter_ns
    trace_op, trace_simple = Tracer.trace_op, Tracer.trace_simple

    depth = threading.local()

    def timed(method, name=lambda first: first):
        def run(self, type, *args, **kwargs):
            outer = not getattr(depth, "n", 0)  # trace_simple may fall back to trace_op
            depth.n = getattr(depth, "n", 0) + 1
            t0 = clock()
            try:
                return method(self, type, *args, **kwargs)
            finally:
                depth.n -= 1
                if outer:
                    record(name(type), t0, clock())

        return run

    call = Tracer._call  # the grad ops of backward() run through it
    _saved["_call"] = call
    Tracer._call = timed(call, lambda info: info.opdef.type)  # type: ignore[method-assign]
    timed_trace_op, timed_trace_simple = timed(trace_op), timed(trace_simple)

    _saved["trace_op"], _saved["trace_simple"] = trace_op, trace_simple
    Tracer.trace_op = timed_trace_op  # type: ignore[method-assign]
    Tracer.trace_simple = timed_trace_simple  # type: ignore[method-assign]


def _unhook_dygraph() -> None:
    from oar.dygraph.tracer import Tracer

    if "trace_op" in _saved:
        Tracer.trace_op = _saved.pop("trace_op")  # type: ignore[method-assign]
        Tracer.trace_simple = _saved.pop("trace_simple")  # type: ignore[method-assign]
        Tracer._call = _saved.pop("_call")  # type: ignore[method-assign]
