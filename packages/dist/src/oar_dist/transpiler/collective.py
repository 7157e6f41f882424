"""The collective transpiler modes: ``nccl2`` and ``collective`` (grad_allreduce).

Both add to the startup program what makes the job one communicator and one
model: ``c_gen_nccl_id`` (checks this process is rank ``trainer_id`` of the
``trainers`` endpoints), ``c_comm_init`` (ring 0 from the config's backend,
``mpi`` by default), then ``c_broadcast`` of every parameter from rank 0 and
``c_sync_comm_stream``, so all trainers start from rank 0's initial values.

- ``nccl2`` leaves the main program alone: ``ParallelExecutor(num_trainers=N,
  trainer_id=i)`` (or ``with_data_parallel`` with those in the BuildStrategy)
  inserts the gradient all-reduce over every place of every trainer.
- ``collective`` also rewrites the main program: the loss gradient is scaled
  by 1/N and the gradients are all-reduced by explicit ops (``str(program)``
  shows them), so a plain ``Executor`` trains.
"""

from __future__ import annotations

from typing import Any

from oar.api import OpRole

from oar_dist.data_parallel.grad_allreduce import COEFF_NUM_DEVICE, insert_grad_allreduce
from oar_dist.data_parallel.runner import fuse_bucket_bytes

NCCL_ID_VAR = "NCCLID"


def parse_endpoints(trainers: Any, mode: str) -> list:
    if isinstance(trainers, str):
        eps = [e.strip() for e in trainers.split(",") if e.strip()]
    elif isinstance(trainers, (list, tuple)):
        eps = [str(e) for e in trainers]
    else:
        eps = []
    if not eps:
        raise ValueError(
            f"DistributeTranspiler.transpile (mode '{mode}'): trainers must list every trainer's "
            f'endpoint, comma-separated ("ip1:port,ip2:port"), given {trainers!r}'
        )
    return eps


class Nccl2Mode:
    """``config.mode = "nccl2"``: communicator setup and initial broadcast in the startup program."""

    name = "nccl2"
    rewrite_main = False

    def __init__(self, config: Any) -> None:
        self.config = config
        self.main = None
        self.startup = None
        self.endpoints: list = []

    def transpile(
        self, trainer_id, program, pservers, trainers, sync_mode, startup_program, current_endpoint
    ) -> None:
        eps = parse_endpoints(trainers, self.name)
        if trainer_id >= len(eps):
            raise ValueError(
                f"DistributeTranspiler.transpile (mode '{self.name}'): trainer_id {trainer_id} is "
                f"out of range for {len(eps)} trainers {eps}"
            )
        if not sync_mode:
            raise ValueError(
                f"DistributeTranspiler.transpile (mode '{self.name}'): collective training is "
                f"synchronous only; sync_mode=False needs the pserver mode"
            )
        self.main, self.startup, self.endpoints = program, startup_program, eps
        nranks = len(eps)
        others = [e for i, e in enumerate(eps) if i != trainer_id]
        sblock = startup_program.global_block()
        with startup_program._role_guard(OpRole.Forward):
            ident = sblock.create_var(name=NCCL_ID_VAR, shape=[2], dtype="int64")
            sblock.append_op(
                "c_gen_nccl_id",
                {},
                {"Out": [ident]},
                {
                    "rank": trainer_id,
                    "endpoint": current_endpoint,
                    "other_endpoints": others,
                    "backend": self.config.backend,
                },
            )
            sblock.append_op(
                "c_comm_init",
                {"X": [ident]},
                {},
                {
                    "nranks": nranks,
                    "rank": trainer_id,
                    "ring_id": 0,
                    "backend": self.config.backend,
                },
            )
            params = [p.name for p in program.global_block().all_parameters()]
            for name in params:
                if not sblock.has_var(name):
                    raise ValueError(
                        f"DistributeTranspiler.transpile: parameter '{name}' of the main program "
                        f"is not created by the startup program given"
                    )
                sblock.append_op(
                    "c_broadcast", {"X": [name]}, {"Out": [name]}, {"ring_id": 0, "root": 0}
                )
            if params:
                sblock.append_op(
                    "c_sync_comm_stream", {"X": params}, {"Out": params}, {"ring_id": 0}
                )
        program._oar_trainers = nranks
        if self.rewrite_main:
            insert_grad_allreduce(
                program,
                None,
                nranks,
                COEFF_NUM_DEVICE,
                fuse=bool(self.config.fuse_all_reduce_ops),
                bucket_bytes=fuse_bucket_bytes(),
                scale_loss=True,
            )

    def get_trainer_program(self, wait_port: bool = True) -> Any:
        return self.main

    def get_startup_program(self, endpoint=None, pserver_program=None, startup_program=None) -> Any:
        return self.startup

    def get_pserver_program(self, endpoint: str) -> Any:
        raise ValueError(
            f"DistributeTranspiler: mode '{self.name}' has no parameter servers "
            f"(get_pserver_program is for mode 'pserver')"
        )

    get_pserver_programs = get_pserver_program


class CollectiveMode(Nccl2Mode):
    """``config.mode = "collective"`` with ``collective_mode = "grad_allreduce"``."""

    name = "collective"
    rewrite_main = True

    def transpile(
        self, trainer_id, program, pservers, trainers, sync_mode, startup_program, current_endpoint
    ) -> None:
        cm = self.config.collective_mode
        if cm is None:
            raise ValueError(
                "DistributeTranspiler (mode 'collective'): set config.collective_mode to "
                "'grad_allreduce' (or 'local_sgd')"
            )
        if cm == "local_sgd":
            raise NotImplementedError(
                "DistributeTranspiler (mode 'collective'): collective_mode 'local_sgd' is not "
                "implemented; use 'grad_allreduce'"
            )
        super().transpile(
            trainer_id, program, pservers, trainers, sync_mode, startup_program, current_endpoint
        )
