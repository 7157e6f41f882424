"""Collective op definitions (Fluid's ``c_*`` ops), so programs carry communication explicitly.

``ring_id`` names the communicator (:func:`oar_dist.collective.get_ring`);
``use_calc_stream`` and the ``c_sync_*`` ops are kept for Fluid's programs
and are no-ops on the CPU, where nothing runs asynchronously.
``c_gen_nccl_id`` / ``c_comm_init`` keep Fluid's names: the "id" is a
rendezvous check of the job (MPI already knows its peers) and ``c_comm_init``
creates the ring from a registered collective backend (``backend`` attr, by
default ``mpi``).

``c_fused_allreduce_sum`` is oar's form of Fluid's ``coalesce_tensor`` +
``c_allreduce_sum``: one message for a bucket of gradients.
"""

from __future__ import annotations

from oar.api import Attr, GradOpDesc, OpDef, VarMeta

REDUCE_TYPES = ("c_allreduce_sum", "c_allreduce_max", "c_allreduce_min", "c_allreduce_prod")


def _nonneg(v):
    return None if v >= 0 else "must be >= 0"


def _positive(v):
    return None if v >= 1 else "must be >= 1"


def _same(ins, attrs):
    return {"Out": ins["X"]}


def _same_list(ins, attrs):
    return {"Out": list(ins["X"])}


def _grad_allreduce_sum(g):
    # d(sum over ranks)/dx: every rank's output gradient, summed back over the ranks
    if not g.wants("X"):
        return []
    return [
        GradOpDesc(
            "c_allreduce_sum",
            {"X": g.output_grad("Out")},
            {"Out": g.input_grad("X")},
            {"ring_id": g.attrs["ring_id"], "use_calc_stream": True},
        )
    ]


def _infer_allgather(ins, attrs):
    x = ins["X"]
    if not x.shape:
        raise ValueError("c_allgather: input X must have at least one dim, given a scalar")
    first = x.shape[0] * attrs["nranks"] if x.shape[0] >= 0 else -1
    return {"Out": VarMeta((first,) + tuple(x.shape[1:]), x.dtype, x.lod_level)}


_RING = {"ring_id": Attr(int, 0, _nonneg), "use_calc_stream": Attr(bool, False)}


def register(registry) -> None:
    for t in REDUCE_TYPES:
        registry.register_op(
            OpDef(
                t,
                ["X"],
                ["Out"],
                dict(_RING, use_model_parallel=Attr(bool, False)),
                infer_shape=_same,
                grad=_grad_allreduce_sum if t == "c_allreduce_sum" else None,
                doc=f"Out = the elementwise {t.rsplit('_', 1)[1]} of X over the ranks of ring_id",
            )
        )
    registry.register_op(
        OpDef(
            "c_fused_allreduce_sum",
            ["X*"],
            ["Out*"],
            dict(_RING),
            infer_shape=_same_list,
            doc="Out[i] = the sum of X[i] over the ranks, all X packed into one message",
        )
    )
    registry.register_op(
        OpDef(
            "c_broadcast",
            ["X"],
            ["Out"],
            dict(_RING, root=Attr(int, 0, _nonneg)),
            infer_shape=_same,
            doc="Out = X of rank `root` on every rank of ring_id",
        )
    )
    registry.register_op(
        OpDef(
            "c_allgather",
            ["X"],
            ["Out"],
            dict(_RING, nranks=Attr(int, 1, _positive)),
            infer_shape=_infer_allgather,
            doc="Out = every rank's X concatenated along axis 0, in rank order",
        )
    )
    registry.register_op(
        OpDef(
            "c_sync_calc_stream",
            ["X"],
            ["Out"],
            {},
            infer_shape=_same,
            doc="wait for computation before communication (a no-op on the CPU)",
        )
    )
    registry.register_op(
        OpDef(
            "c_sync_comm_stream",
            ["X*"],
            ["Out*"],
            {"ring_id": Attr(int, 0, _nonneg)},
            infer_shape=_same_list,
            doc="wait for communication before computation (a no-op on the CPU)",
        )
    )
    registry.register_op(
        OpDef(
            "c_gen_nccl_id",
            [],
            ["Out"],
            {
                "rank": Attr(int, 0, _nonneg),
                "endpoint": Attr(str, ""),
                "other_endpoints": Attr(list, []),
                "backend": Attr(str, "mpi"),
            },
            infer_shape=lambda ins, a: {"Out": VarMeta((2,), "int64")},
            doc="check that this process is rank `rank` of a job of len(other_endpoints)+1 ranks",
        )
    )
    registry.register_op(
        OpDef(
            "c_comm_init",
            ["X"],
            [],
            {
                "nranks": Attr(int, 1, _positive),
                "rank": Attr(int, 0, _nonneg),
                "ring_id": Attr(int, 0, _nonneg),
                "device_id": Attr(int, -1),
                "backend": Attr(str, "mpi"),
            },
            infer_shape=lambda ins, a: {},
            doc="create communicator ring_id (nranks ranks, this one `rank`) from a collective backend",
        )
    )
