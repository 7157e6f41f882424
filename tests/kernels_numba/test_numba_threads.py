"""Compiled loops called from several Python threads at once.

numba's workqueue threading layer aborts the whole process when two threads launch
parallel regions at the same time, so the check runs in a child process: three
threads (the main one and two others, like the data-parallel executor's places)
run the relu kernel and a loop of this package's kind, at parallel sizes, together, many times, and every result
must equal the single-threaded one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("oar_kernels_numba")
from oar_kernels_numba.compat import unavailable_reason

if unavailable_reason() is not None:
    pytest.skip(f"numba unavailable: {unavailable_reason()}", allow_module_level=True)

CHILD = """
    import threading
    import numpy as np
    from oar.api import registries
    from oar_kernels_numba import _jit

    @_jit.loop
    def heavy(a, out):
        for i in _jit.prange(a.size):
            out[i] = np.sqrt(a[i]) + 1

    kernels = registries().kernels
    relu = kernels.lookup("relu", "cpu", "float32")
    assert relu.plugin == "kernels_numba", relu.plugin
    rng = np.random.default_rng(0)
    n = _jit.PARALLEL_MIN * 4 + 3
    xs = [rng.standard_normal(n).astype("float32") for _ in range(3)]
    want = [np.maximum(x, 0) for x in xs]
    want_heavy = [np.sqrt(np.abs(x)) + 1 for x in xs]
    bad, done = [], []
    start = threading.Barrier(3)

    def work(i):
        out2 = np.empty_like(xs[i])
        start.wait()
        for _ in range(ROUNDS):
            out = relu.kernel({"X": xs[i]}, {})["Out"]
            heavy(n, np.abs(xs[i]), out2)
            if not (np.array_equal(out, want[i]) and np.allclose(out2, want_heavy[i])):
                bad.append(i)
            done.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in (1, 2)]
    for t in threads:
        t.start()
    work(0)
    for t in threads:
        t.join(60)
    print("BAD", len(bad), "CALLS", len(done))
"""


def test_parallel_loops_from_three_threads_at_once(tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="2", NUMBA_NUM_THREADS="2")
    env["OAR_NUMBA_PARALLEL_MIN"] = str(1 << 16)  # parallel at 256k elements, not 8M
    env.pop("OAR_DISABLE_PLUGINS", None)
    env.pop("NUMBA_THREADING_LAYER", None)  # the default layer: workqueue, not thread-safe
    child = tmp_path / "child.py"  # a file: numba caches compiled loops next to their source
    child.write_text(textwrap.dedent(CHILD).replace("ROUNDS", "100"))
    res = subprocess.run(
        [sys.executable, str(child)], capture_output=True, text=True, timeout=180, env=env
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert "BAD 0 CALLS 300" in res.stdout, res.stdout + res.stderr[-2000:]


def test_serial_and_parallel_twins_do_not_share_cached_code(tmp_path):
    """numba's disk cache does not key on ``parallel=True``: a serial loop must not load the
    parallel twin's cached code (then every thread would launch parallel regions)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    env.pop("OAR_DISABLE_PLUGINS", None)
    head = (
        "import numpy as np\nfrom oar_kernels_numba.activation import _relu\n"
        "x = np.ones(10, np.float32)\n"
    )
    steps = [
        "_relu.parallel(x, np.empty_like(x))\n",  # compiles and caches the parallel twin only
        "_relu.serial(x, np.empty_like(x))\nprint('HITS', sum(_relu.serial.stats.cache_hits.values()))\n",
    ]
    for step in steps:
        res = subprocess.run(
            [sys.executable, "-c", head + step],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert res.returncode == 0, res.stderr[-3000:]
    assert "HITS 0" in res.stdout, res.stdout


SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "mlp_at_threads.py"


def test_mlp_results_equal_at_one_and_two_threads_with_parallel_loops():
    """An MLP trained with Adam, its activations and updates on parallel compiled loops (a
    low threshold), gives bit-identical losses and weights at 1 and 2 threads."""
    runs = []
    for n in ("1", "2"):
        env = dict(
            os.environ, OMP_NUM_THREADS=n, NUMBA_NUM_THREADS="2", FLAGS_cpu_deterministic="1"
        )
        env["OAR_NUMBA_PARALLEL_MIN"] = "4096"  # 64x512 activations and weights: parallel
        env.pop("OAR_DISABLE_PLUGINS", None)
        res = subprocess.run(
            [sys.executable, str(SCRIPT), "64", "sigmoid"],
            capture_output=True,
            text=True,
            timeout=180,
            env=env,
        )
        assert res.returncode == 0, res.stderr[-3000:]
        runs.append(json.loads(res.stdout.strip().splitlines()[-1]))
    assert runs[0][2] == [False, False] and runs[1][2] == [True, True]  # serial, then parallel
    assert runs[0][:2] == runs[1][:2]
