"""Kernels of the collective ops: each calls the backend of its ring (see ``oar_dist.ops.collective``)."""

from __future__ import annotations

import os

import numpy as np

from oar_dist.collective import get_ring, make_backend, set_ring
from oar_dist.collective.base import CollectiveError

DTYPES = ("float32", "float64", "int32", "int64")


def _reduce(op_type: str, op: str):
    def kernel(inputs, attrs):
        ring = get_ring(attrs["ring_id"], op_type)
        return {"Out": ring.allreduce(inputs["X"], op)}

    kernel.__name__ = f"{op_type}_kernel"
    return kernel


def c_fused_allreduce_sum(inputs, attrs):
    ring = get_ring(attrs["ring_id"], "c_fused_allreduce_sum")
    xs = inputs["X"]
    return {"Out": ring.allreduce_many(xs, "sum", bucket_bytes=1 << 62)}


def c_broadcast(inputs, attrs):
    ring = get_ring(attrs["ring_id"], "c_broadcast")
    if attrs["root"] >= ring.size:
        raise ValueError(
            f"c_broadcast: root {attrs['root']} is not a rank of ring {attrs['ring_id']} "
            f"({ring.size} ranks)"
        )
    return {"Out": ring.broadcast(inputs["X"], attrs["root"])}


def c_allgather(inputs, attrs):
    ring = get_ring(attrs["ring_id"], "c_allgather")
    if ring.size != attrs["nranks"]:
        raise ValueError(
            f"c_allgather: attr nranks is {attrs['nranks']} but ring {attrs['ring_id']} has "
            f"{ring.size} ranks (DGCMomentumOptimizer's num_trainers must count every rank of "
            f"the ring: trainers x places per trainer)"
        )
    return {"Out": ring.allgather(inputs["X"])}


def c_sync_calc_stream(inputs, attrs):
    return {"Out": inputs["X"]}


def c_sync_comm_stream(inputs, attrs):
    return {"Out": list(inputs["X"])}


def _job(backend: str, nranks: int):
    """The backend object of the whole job, checked against the expected size."""
    if nranks == 1:
        return make_backend("single")
    return make_backend(backend)


def c_gen_nccl_id(inputs, attrs):
    nranks = len(attrs["other_endpoints"]) + 1
    job = _job(attrs["backend"], nranks)
    _check_job(job, nranks, attrs["rank"], "c_gen_nccl_id")
    return {"Out": np.array([attrs["rank"], nranks], dtype="int64")}


def _gpu_of(attrs) -> int:
    """The GPU of this rank: the op's ``device_id``, else the first of ``FLAGS_selected_gpus``."""
    if attrs.get("device_id", -1) >= 0:
        return int(attrs["device_id"])
    sel = os.environ.get("FLAGS_selected_gpus", "").split(",")[0].strip()
    return int(sel) if sel.isdigit() else 0


def _comm_init(forced_backend: str | None):
    def c_comm_init(inputs, attrs):
        nranks, rank = attrs["nranks"], attrs["rank"]
        ident = np.asarray(_host(inputs["X"])).ravel()
        if ident.size == 2 and (int(ident[0]), int(ident[1])) != (rank, nranks):
            raise ValueError(
                f"c_comm_init: the id from c_gen_nccl_id says rank {int(ident[0])} of "
                f"{int(ident[1])}, but the op is for rank {rank} of {nranks}"
            )
        backend = forced_backend or attrs["backend"]
        if backend == "nccl" and nranks > 1:
            job = make_backend("nccl", rank=rank, nranks=nranks, device_id=_gpu_of(attrs))
        else:
            job = _job(backend, nranks)
        _check_job(job, nranks, rank, "c_comm_init")
        set_ring(attrs["ring_id"], job)
        return {}

    return c_comm_init


def _host(array):
    get = getattr(array, "get", None)  # a cupy array copies itself to the host with .get()
    return get() if callable(get) and not isinstance(array, np.ndarray) else array


def _check_job(job, nranks: int, rank: int, who: str) -> None:
    if job.size != nranks or job.rank != rank:
        hint = (
            f"start {nranks} processes with `mpiexec -n {nranks} python ...` or "
            f"`python -m oar.distributed.launch`"
            if job.size != nranks
            else "pass each process its own trainer_id (its MPI rank)"
        )
        raise CollectiveError(
            f"{who}: the program was transpiled for rank {rank} of {nranks} trainers, but this "
            f"process is rank {job.rank} of {job.size} in the {job.name} backend: {hint}"
        )


def kernels():
    """(op type, dtypes, kernel) for every collective op."""
    out = [
        (t, DTYPES, _reduce(t, t.rsplit("_", 1)[1]))
        for t in ("c_allreduce_sum", "c_allreduce_max", "c_allreduce_min", "c_allreduce_prod")
    ]
    out += [
        ("c_fused_allreduce_sum", DTYPES, c_fused_allreduce_sum),
        ("c_broadcast", DTYPES, c_broadcast),
        ("c_allgather", DTYPES, c_allgather),
        ("c_sync_calc_stream", None, c_sync_calc_stream),
        ("c_sync_comm_stream", None, c_sync_comm_stream),
        ("c_gen_nccl_id", None, c_gen_nccl_id),
        ("c_comm_init", None, _comm_init(None)),
    ]
    return out


def cuda_kernels():
    """The same kernels for GPU programs, where rings are NCCL communicators as in Fluid
    (device arrays go to NCCL without a host copy)."""
    return [(t, d, _comm_init("nccl") if t == "c_comm_init" else fn) for t, d, fn in kernels()]
