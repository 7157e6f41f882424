"""The NCCL backend's call sequence, run against a host-memory NCCL (tests/dist/fake_nccl.py).

These tests run everywhere; tests/kernels_cuda/test_gpu_nccl.py runs the same backend on
real GPUs when cupy finds them.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

pytest.importorskip("oar_dist")

from oar_dist.collective import CollectiveError, ThreadGroup
from oar_dist.collective.nccl import (
    NcclGroup,
    nccl_job_backend,
    unique_id_from_array,
    unique_id_to_array,
)

from .fake_nccl import DeviceArray, FakeNccl, HostRuntime
from .rank_threads import run_ranks


def _group(n=3, **kw):
    nccl = FakeNccl()
    return nccl, NcclGroup(list(range(n)), nccl=nccl, runtime=HostRuntime(), **kw)


@pytest.mark.parametrize("op", ["sum", "max", "min", "prod"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
def test_allreduce_equals_numpy(op, dtype):
    _, group = _group()
    xs = [(np.arange(6).reshape(2, 3) + r + 1).astype(dtype) for r in range(3)]
    ref = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}[op](np.stack(xs), 0)
    outs = run_ranks(group.members, lambda m: m.allreduce(xs[m.rank], op))
    for out in outs:
        assert type(out) is np.ndarray  # host in, host out
        np.testing.assert_array_equal(out, ref.astype(dtype))


def test_device_arrays_stay_on_the_device_and_inputs_are_untouched():
    _, group = _group(2)
    xs = [np.full(4, r + 1.0, "float32").view(DeviceArray) for r in range(2)]
    outs = run_ranks(group.members, lambda m: m.allreduce(xs[m.rank]))
    assert all(not isinstance(o, DeviceArray) or o is not xs[0] for o in outs)
    np.testing.assert_array_equal(np.asarray(outs[1]), np.full(4, 3.0))
    np.testing.assert_array_equal(np.asarray(xs[0]), np.full(4, 1.0))


def test_broadcast_and_allgather():
    _, group = _group(3)
    xs = [np.full((2, 2), r, "int32") for r in range(3)]
    outs = run_ranks(group.members, lambda m: m.broadcast(xs[m.rank], root=2))
    for out in outs:
        np.testing.assert_array_equal(out, xs[2])
    outs = run_ranks(group.members, lambda m: m.allgather(xs[m.rank]))
    for out in outs:
        np.testing.assert_array_equal(out, np.concatenate(xs))
    with pytest.raises(ValueError, match="root 3 is out of range"):
        group.members[0].broadcast(xs[0], root=3)


def test_allreduce_many_is_one_group_call():
    nccl, group = _group(2)
    arrays = [np.ones(3, "float32"), np.arange(4, dtype="float64"), np.ones((2, 2), "int32")]
    outs = run_ranks(group.members, lambda m: m.allreduce_many([a * (m.rank + 1) for a in arrays]))
    for out in outs:
        for a, o in zip(arrays, out):
            np.testing.assert_array_equal(o, a * 3)
    assert [c for c in nccl.calls if c[0] == "allReduce"]
    assert all(depth == 1 for _, _, depth in nccl.calls)  # inside groupStart/groupEnd


def test_unsupported_dtype_is_a_clear_error():
    _, group = _group(1)
    with pytest.raises(CollectiveError, match="dtype bool is not supported by NCCL"):
        group.members[0].allreduce(np.ones(2, bool))


def test_a_collective_that_never_finishes_aborts_the_communicator():
    nccl = FakeNccl()
    group = NcclGroup([0], nccl=nccl, runtime=HostRuntime(streams_finish=False), timeout=0.05)
    m = group.members[0]
    with pytest.raises(CollectiveError, match="gave up in allreduce.*aborted"):
        m.allreduce(np.ones(2, "float32"))
    assert m.comm.aborted
    with pytest.raises(CollectiveError, match="closed or aborted"):
        m.allreduce(np.ones(2, "float32"))


@pytest.mark.parametrize("as_bytes", [True, False])
def test_unique_id_round_trips_through_a_host_array(as_bytes):
    uid = FakeNccl(unique_id_as_bytes=as_bytes).get_unique_id()
    arr = unique_id_to_array(uid)
    assert arr.dtype == np.uint8 and arr.size == 128
    assert unique_id_from_array(arr, uid) == uid


@pytest.mark.parametrize("as_bytes", [True, False])
def test_processes_join_one_communicator_through_the_bootstrap_ring(as_bytes):
    """Two 'processes' (threads with a threads-backend world) with one GPU each: rank 0's
    unique id reaches rank 1 through the bootstrap ring, and the ranks reduce together."""
    nccl = FakeNccl(unique_id_as_bytes=as_bytes)
    world = ThreadGroup(2)
    rt = HostRuntime()

    def process(boot):
        backend = nccl_job_backend(boot.rank, 2, boot.rank, boot, nccl=nccl, runtime=rt)
        return backend.rank, backend.allreduce(np.full(2, boot.rank + 1.0, "float32"))

    outs = run_ranks(world.members, process)
    assert [r for r, _ in outs] == [0, 1]
    for _, out in outs:
        np.testing.assert_array_equal(out, [3.0, 3.0])
    with pytest.raises(CollectiveError, match="asked for rank 1 of 2"):
        nccl_job_backend(1, 2, 0, world.members[0], nccl=nccl, runtime=rt)


def test_spanning_group_ranks_places_of_every_trainer():
    """2 trainers x 2 GPUs: one communicator of 4 ranks, joined in one group call per process."""
    nccl = FakeNccl()
    world = ThreadGroup(2)
    groups: list = [None, None]

    def process(boot):
        groups[boot.rank] = NcclGroup([0, 1], boot, nccl=nccl, runtime=HostRuntime())

    run_ranks(world.members, process)
    members = groups[0].members + groups[1].members
    assert [m.rank for m in members] == [0, 1, 2, 3] and {m.size for m in members} == {4}
    outs = run_ranks(members, lambda m: m.allreduce(np.array([m.rank + 1.0], "float32")))
    assert [float(o[0]) for o in outs] == [10.0] * 4


def test_data_parallel_over_gpu_places_reduces_with_nccl(monkeypatch):
    """The runner picks NCCL for GPU places; training equals the threads backend's."""
    from oar import fluid
    from oar_dist.data_parallel import runner as runner_mod

    from .model import build, global_batch

    def train(use_nccl):
        nccl = FakeNccl()
        if use_nccl:
            monkeypatch.setattr(runner_mod.DataParallelRunner, "_gpu_ids", lambda self: [0, 1])
            monkeypatch.setattr(
                runner_mod,
                "make_nccl_group",
                lambda ids, outer: NcclGroup(ids, outer, nccl=nccl, runtime=HostRuntime()),
            )
            monkeypatch.setattr(runner_mod, "current_gpu", lambda d: contextlib.nullcontext())
        main, startup, loss = build(seed=3)
        scope = fluid.Scope()
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup, scope=scope)
        compiled = fluid.CompiledProgram(main).with_data_parallel(
            loss_name=loss.name, places=fluid.cpu_places(2)
        )
        losses = []
        for step in range(4):
            x, y, _ = global_batch(step)
            (lv,) = exe.run(compiled, feed={"x": x, "y": y}, fetch_list=[loss], scope=scope)
            losses.append(float(np.mean(lv)))
        monkeypatch.undo()
        return losses, nccl.calls

    ref, _ = train(False)
    got, calls = train(True)
    assert any(c[0] == "allReduce" for c in calls)
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    assert got[-1] < got[0]


def test_comm_init_on_gpu_programs_makes_an_nccl_ring(monkeypatch):
    from oar_dist.kernels import collective

    asked = {}

    def fake_make_backend(name, **kwargs):
        asked.update(name=name, **kwargs)
        return type("B", (), {"size": 2, "rank": 1, "name": name})()

    monkeypatch.setattr(collective, "make_backend", fake_make_backend)
    monkeypatch.setattr(collective, "set_ring", lambda ring, job: asked.update(ring=ring))
    monkeypatch.setenv("FLAGS_selected_gpus", "3")
    kernel = dict((t, fn) for t, _, fn in collective.cuda_kernels())["c_comm_init"]
    attrs = {"nranks": 2, "rank": 1, "ring_id": 0, "device_id": -1, "backend": "mpi"}
    kernel({"X": np.array([1, 2], "int64")}, attrs)
    assert asked == {"name": "nccl", "rank": 1, "nranks": 2, "device_id": 3, "ring": 0}
