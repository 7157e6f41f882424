"""fluid.profiler: per-op table and Chrome trace for static and dygraph runs; nothing when off."""

from __future__ import annotations

import json

import numpy as np
import pytest
from oar import fluid
from oar.dygraph.tracer import Tracer
from oar.errors import DeviceUnavailableError

profiler = fluid.profiler


def _net():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        x = fluid.data("x", [None, 4])
        loss = fluid.layers.reduce_mean(fluid.layers.fc(x, 3))
        fluid.optimizer.SGD(0.1).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(start)
    return main, exe, scope, loss


def _rows(text: str) -> dict:
    rows = {}
    for line in text.splitlines():
        if line.startswith("thread"):
            name, calls, total, lo, hi, ave, ratio = line.split()
            rows[name.split("::", 1)[1]] = (int(calls), float(total), float(lo), float(hi))
    return rows


def test_static_table_and_trace(tmp_path, capsys):
    main, exe, scope, loss = _net()
    feed = {"x": np.ones((2, 4), "float32")}
    path = tmp_path / "trace.json"
    with fluid.scope_guard(scope):
        exe.run(main, feed=feed, fetch_list=[loss])  # a plain plan first: profiling swaps it
        with profiler.profiler("CPU", "total", str(path)):
            for _ in range(3):
                exe.run(main, feed=feed, fetch_list=[loss])
    rows = _rows(capsys.readouterr().out)
    types = [op.type for op in main.global_block().ops]
    assert set(rows) == set(types)
    for op_type, (calls, total, lo, hi) in rows.items():
        assert calls == 3 * types.count(op_type)
        assert 0 <= lo <= hi <= total
    totals = [r[1] for r in rows.values()]
    assert totals == sorted(totals, reverse=True)  # sorted by total, descending
    events = json.loads(path.read_text())["traceEvents"]
    assert len(events) == 3 * len(types)
    assert {e["name"] for e in events} == set(types)
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)


def test_off_means_plain_plans_and_the_tracer_unwrapped(tmp_path, capsys):
    main, exe, scope, loss = _net()
    original = Tracer.trace_op
    with fluid.scope_guard(scope):
        with profiler.profiler("CPU", None, str(tmp_path / "p.json")):
            assert Tracer.trace_op is not original
            exe.run(main, feed={"x": np.ones((1, 4), "float32")}, fetch_list=[loss])
        assert Tracer.trace_op is original
        plan = exe._plan(main, ("x",), (loss.name,))
    assert type(plan).__name__ == "Plan" and plan.profiled is False
    capsys.readouterr()


def test_dygraph_ops_and_their_grads_are_timed(tmp_path, capsys):
    profiler.start_profiler("All")
    with fluid.dygraph.guard():
        linear = fluid.dygraph.Linear(4, 2)
        out = fluid.layers.reduce_mean(
            linear(fluid.dygraph.to_variable(np.ones((2, 4), "float32")))
        )
        out.backward()
    profiler.stop_profiler("calls", str(tmp_path / "d.json"))
    rows = _rows(capsys.readouterr().out)
    assert {"matmul", "reduce_mean", "reduce_mean_grad"} <= set(rows) or {
        "mul",
        "reduce_mean",
        "reduce_mean_grad",
    } <= set(rows), rows
    calls = [r[0] for r in rows.values()]
    assert calls == sorted(calls, reverse=True)


def test_bad_arguments_and_cuda_profiler():
    with pytest.raises(ValueError, match="'CPU' or 'GPU' or 'All'"):
        profiler.start_profiler("TPU")
    with pytest.raises(ValueError, match="sorted_key"):
        profiler.stop_profiler("speed")
    with pytest.raises(DeviceUnavailableError, match="cuda_profiler"):
        with profiler.cuda_profiler("/tmp/never_written.txt"):
            pass
    profiler.reset_profiler()
    assert not profiler.is_profiler_enabled()
