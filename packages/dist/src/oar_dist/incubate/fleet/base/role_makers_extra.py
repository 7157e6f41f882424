"""``GeneralRoleMaker`` and ``MPISymetricRoleMaker`` (``fluid.incubate.fleet.base.role_maker``).

- ``GeneralRoleMaker(**kwargs)``: a parameter-server role from the environment
  (``TRAINING_ROLE``, ``PADDLE_PSERVERS_IP_PORT_LIST``, ``PADDLE_TRAINER_ENDPOINTS`` or
  ``PADDLE_TRAINERS_NUM``, ``PADDLE_TRAINER_ID``, and ``PADDLE_PSERVER_ID`` or
  ``POD_IP``/``PADDLE_PORT`` for a pserver); its ``barrier_worker``, ``barrier_all``,
  ``all_gather`` and ``all_reduce_worker`` meet in the shared directory ``path``
  (**difference:** Fluid 1.8 used Gloo over HDFS or that directory; ``iface``,
  ``http_ip_port``, ``hdfs_name``, ``hdfs_ugi`` are accepted and unused).
- ``MPISymetricRoleMaker()``: under ``mpiexec`` every node runs one worker and one
  server: even ranks are workers (worker ``rank // 2``), odd ranks servers (server
  ``rank // 2``, endpoint ``<its host's ip>:<PADDLE_PORT (6170) + server index>``);
  the collectives go over MPI (mpi4py).
"""

from __future__ import annotations

import os
import socket
from typing import Any

import numpy as np

from oar_dist.incubate.fleet.base.rendezvous import FileRendezvous
from oar_dist.incubate.fleet.base.role_maker import PaddleCloudRoleMaker, Role, RoleMakerBase

_REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}


def _reduce(values: list, mode: str, who: str):
    if mode not in _REDUCE:
        raise ValueError(
            f"{who}.all_reduce_worker: mode must be one of {sorted(_REDUCE)}, given {mode!r}"
        )
    return _REDUCE[mode](np.stack(values), axis=0)


class GeneralRoleMaker(PaddleCloudRoleMaker):
    """Fluid 1.8's Gloo role maker, with a shared-directory rendezvous (see the module doc)."""

    _KNOWN = (
        "path",
        "iface",
        "init_timeout_seconds",
        "run_timeout_seconds",
        "http_ip_port",
        "use_metric",
        "hdfs_name",
        "hdfs_ugi",
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(is_collective=False)
        unknown = sorted(set(kwargs) - set(self._KNOWN))
        if unknown:
            raise TypeError(
                f"GeneralRoleMaker: unknown arguments {unknown} (known: {list(self._KNOWN)})"
            )
        self._path = kwargs.get("path")
        self._timeout = float(kwargs.get("run_timeout_seconds", 9999999))
        self._groups: dict = {}

    def generate_role(self) -> None:
        if self._role_is_generated:
            return
        env = os.environ
        workers = [e for e in env.get("PADDLE_TRAINER_ENDPOINTS", "").split(",") if e]
        self._generate_ps_role(len(workers) or None, env.get("PADDLE_PSERVER_ID"))
        if workers:
            self._worker_endpoints = workers

    def _group(self, name: str) -> FileRendezvous:
        if self._path is None:
            raise RuntimeError(
                "GeneralRoleMaker: barrier/all_gather/all_reduce need GeneralRoleMaker(path=...), a "
                "directory every process of the job can write"
            )
        g = self._groups.get(name)
        if g is None:
            if name == "worker":
                rank, size = self.worker_index(), self.worker_num()
            else:
                nw = self.worker_num()
                rank = self._current_id + (0 if self.is_worker() else nw)
                size = nw + self.server_num()
            g = self._groups[name] = FileRendezvous(self._path, name, rank, size, self._timeout)
        return g

    def barrier_worker(self) -> None:
        if self.is_worker():
            self._group("worker").barrier()

    def barrier_all(self) -> None:
        self._group("all").barrier()

    def all_gather(self, input):
        return [
            v.item() if v.ndim == 0 else v.tolist() for v in self._group("all").allgather(input)
        ]

    def all_reduce_worker(self, input, output, mode: str = "sum") -> None:
        if not self.is_worker():
            return
        res = _reduce(self._group("worker").allgather(np.asarray(input)), mode, "GeneralRoleMaker")
        np.copyto(output, res.reshape(np.shape(output)))


class MPISymetricRoleMaker(RoleMakerBase):
    """A worker and a server per node under ``mpiexec`` (see the module doc)."""

    def __init__(self) -> None:
        super().__init__()
        self._world: Any = None
        self._node: Any = None

    @staticmethod
    def _mpi():
        try:
            from mpi4py import MPI
        except (ImportError, RuntimeError) as exc:
            raise RuntimeError(
                f"MPISymetricRoleMaker needs mpi4py and an MPI library (pip install mpi4py mpich): {exc}"
            ) from exc
        return MPI

    def get_local_ip(self) -> str:
        try:
            return socket.gethostbyname(socket.gethostname())
        except OSError:
            return "127.0.0.1"

    def generate_role(self) -> None:
        if self._role_is_generated:
            return
        world = self._mpi().COMM_WORLD
        rank, size = world.Get_rank(), world.Get_size()
        if size % 2:
            raise ValueError(
                f"MPISymetricRoleMaker: every node runs a worker and a server, so the MPI job needs "
                f"an even number of processes; given {size}"
            )
        ips = world.allgather(self.get_local_ip())
        port = int(os.environ.get("PADDLE_PORT", "6170"))
        half = size // 2
        self._server_endpoints = [f"{ips[2 * i + 1]}:{port + i}" for i in range(half)]
        self._worker_endpoints = [f"{ips[2 * i]}" for i in range(half)]
        self._worker_num = half
        self._role = Role.WORKER if rank % 2 == 0 else Role.SERVER
        self._current_id = rank // 2
        self._world = world
        self._node = world.Split(rank % 2, rank)
        self._role_is_generated = True

    def barrier_worker(self) -> None:
        if self.is_worker():
            self._node.Barrier()

    def barrier_all(self) -> None:
        self._check("barrier_all")
        self._world.Barrier()

    def all_gather(self, input):
        self._check("all_gather")
        return self._world.allgather(input)

    def all_reduce_worker(self, input, output, mode: str = "sum") -> None:
        if not self.is_worker():
            return
        values = self._node.allgather(np.asarray(input))
        res = _reduce(values, mode, "MPISymetricRoleMaker")
        np.copyto(output, res.reshape(np.shape(output)))

    def _finalize(self) -> None:
        if self._node is not None:
            self._node.Free()
            self._node = None
