"""The collective backends: threads (in-process ranks), single, and MPI under mpiexec -n 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("oar_dist")

from oar_dist.collective import (
    CollectiveError,
    SingleBackend,
    ThreadGroup,
    get_ring,
    make_backend,
    plan_buckets,
    thread_rings,
)
from oar_dist.collective.mpi import wait_until_read

from .mpi_helpers import require_mpi, run_mpi
from .rank_threads import run_ranks

HERE = Path(__file__).parent


def _on_threads(size, fn):
    group = ThreadGroup(size, timeout=10)
    return run_ranks(group.members, fn, on_error=group.abort)


@pytest.mark.parametrize(
    "op,ref", [("sum", np.sum), ("max", np.max), ("min", np.min), ("prod", np.prod)]
)
def test_thread_allreduce_ops(op, ref):
    data = [np.arange(6, dtype="float64").reshape(2, 3) * (r + 1) - r for r in range(3)]
    out = _on_threads(3, lambda b: b.allreduce(data[b.rank], op))
    want = ref(np.stack(data), axis=0)
    for o in out:
        np.testing.assert_allclose(o, want)
    assert out[0] is not out[1]  # every rank owns its result (update kernels write in place)


def test_thread_broadcast_allgather_barrier():
    out = _on_threads(2, lambda b: b.broadcast(np.full(3, b.rank + 5.0), root=1))
    assert all((o == 6.0).all() for o in out)
    out = _on_threads(2, lambda b: b.allgather(np.full((b.rank + 1, 2), b.rank)))
    np.testing.assert_array_equal(out[0], [[0, 0], [1, 1], [1, 1]])
    assert _on_threads(2, lambda b: b.barrier()) == [None, None]


def test_thread_allreduce_many_buckets_match_per_tensor():
    rng = np.random.RandomState(0)
    data = [
        [rng.rand(*s).astype("float32") for s in [(4, 3), (3,), (5, 5), (1,)]] for _ in range(2)
    ]
    out = _on_threads(2, lambda b: b.allreduce_many(data[b.rank], bucket_bytes=64))
    for i in range(4):
        np.testing.assert_allclose(out[1][i], data[0][i] + data[1][i], rtol=1e-6)
        assert out[1][i].shape == data[0][i].shape


def test_plan_buckets_respects_threshold_and_dtype():
    arrays = [
        np.zeros(10, "float32"),
        np.zeros(10, "float32"),
        np.zeros(30, "float32"),
        np.zeros(2, "float64"),
        np.zeros(2, "float64"),
    ]
    assert plan_buckets(arrays, 80) == [[0, 1], [2], [3, 4]]
    assert plan_buckets(arrays, 1 << 20) == [[0, 1, 2], [3, 4]]


def test_thread_collective_times_out_naming_the_rank():
    group = ThreadGroup(2, timeout=0.2)
    with pytest.raises(CollectiveError, match="rank 0 gave up in allreduce.*0.2 s"):
        group.member(0).allreduce(np.ones(2))


def test_thread_shape_mismatch_is_an_error():
    with pytest.raises(CollectiveError, match="different shapes"):
        _on_threads(2, lambda b: b.allreduce(np.ones(b.rank + 1)))


def test_single_and_registry():
    s = make_backend("single")
    assert (s.rank, s.size) == (0, 1)
    np.testing.assert_array_equal(s.allreduce(np.arange(3)), np.arange(3))
    with pytest.raises(ValueError, match="reduce op must be one of"):
        s.allreduce(np.ones(1), "mean")
    assert isinstance(get_ring(0), SingleBackend)
    other = SingleBackend()
    with thread_rings({0: other}):
        assert get_ring(0) is other
    with pytest.raises(RuntimeError, match="no communicator for ring_id 3"):
        get_ring(3, "c_allreduce_sum")


MPI_SCRIPT = """
import json, sys
import numpy as np
import oar
from oar_dist.collective import make_backend
b = make_backend("mpi")
r = b.rank
res = {
    "size": b.size,
    "sum": b.allreduce(np.full(3, r + 1.0, "float32")).tolist(),
    "max": b.allreduce(np.array([r, -r], "int64"), "max").tolist(),
    "bcast": b.broadcast(np.full(2, 10.0 * (r + 1)), root=1).tolist(),
    "gather": b.allgather(np.full((r + 1, 2), r, "float32")).tolist(),
    "many": [a.tolist() for a in b.allreduce_many(
        [np.full(2, r, "float32"), np.full(3, 1.0, "float32"), np.full(1, r, "float64")],
        bucket_bytes=32)],
}
b.barrier()
open(sys.argv[1] + f"/rank{r}.json", "w").write(json.dumps(res))
"""


def test_mpi_backend_two_ranks(tmp_path):
    script = tmp_path / "mpi_backend.py"
    script.write_text(MPI_SCRIPT)
    run_mpi(script, 2, str(tmp_path), timeout=120)
    results = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    for res in results:
        assert res["size"] == 2
        assert res["sum"] == [3.0, 3.0, 3.0]
        assert res["max"] == [1, 0]
        assert res["bcast"] == [20.0, 20.0]
        assert res["gather"] == [[0, 0], [1, 1], [1, 1]]
        assert res["many"] == [[1.0, 1.0], [2.0, 2.0, 2.0], [1.0]]


STUCK_SCRIPT = """
import os, subprocess, sys, time
import numpy as np
import oar
from oar_dist.collective import make_backend
b = make_backend("mpi")
if b.rank == 1:
    time.sleep(60)  # a stuck rank: never joins the allreduce
if sys.argv[1] == "starve":
    # a loaded machine: mpiexec's proxy (this rank's parent) gets no CPU for 3 s, past the
    # watchdog's firing; its message must still reach mpiexec's stderr
    subprocess.Popen(["sh", "-c", f"sleep 3; kill -CONT {os.getppid()}"])
    os.kill(os.getppid(), 19)
b.allreduce(np.ones(4))
"""


@pytest.mark.parametrize("load", ["idle", "starve"])
def test_mpi_stuck_peer_ends_the_job_within_the_timeout(tmp_path, load):
    exe = require_mpi()
    script = tmp_path / "stuck.py"
    script.write_text(STUCK_SCRIPT)
    env = dict(os.environ, OAR_COLLECTIVE_TIMEOUT="1")
    t0 = time.monotonic()
    proc = subprocess.run(
        [exe, "-n", "2", sys.executable, str(script), load],
        capture_output=True,
        text=True,
        timeout=50,
        env=env,
    )
    elapsed = time.monotonic() - t0
    assert proc.returncode != 0
    assert "rank 0 of 2 waited more than 1 s in allreduce" in proc.stderr, proc
    assert elapsed < 30


def test_watchdog_waits_until_its_message_was_read(tmp_path):
    read_at = []
    r, w = os.pipe()
    try:
        os.write(w, b"oar-dist: aborting\n")

        def reader():
            time.sleep(0.3)
            read_at.append(time.monotonic())
            os.read(r, 100)

        t = threading.Thread(target=reader)
        t.start()
        assert wait_until_read(w, limit=20)
        done = time.monotonic()
        t.join(20)
        assert read_at and done >= read_at[0]
        os.write(w, b"never read")
        assert not wait_until_read(w, limit=0.05)  # bounded: gives up
    finally:
        os.close(r)
        os.close(w)
    with open(tmp_path / "log", "w") as f:  # a file holds what was written: nothing to wait for
        f.write("x")
        f.flush()
        assert wait_until_read(f.fileno(), limit=0)
