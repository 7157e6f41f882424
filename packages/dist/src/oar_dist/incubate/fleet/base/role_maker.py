"""``fluid.incubate.fleet.base.role_maker``: who this process is in a job.

A role maker answers ``worker_index()``, ``worker_num()``, ``is_first_worker()``
and the trainer endpoints. ``PaddleCloudRoleMaker(is_collective=True)`` reads
the variables ``python -m oar.distributed.launch`` sets. The parameter-server
roles: ``PaddleCloudRoleMaker()`` (``is_collective=False``) reads
``TRAINING_ROLE`` (``TRAINER`` / ``PSERVER``), ``PADDLE_PSERVERS_IP_PORT_LIST``,
``PADDLE_TRAINER_ID``, ``PADDLE_TRAINERS_NUM``, ``POD_IP`` and ``PADDLE_PORT``;
``UserDefinedRoleMaker(current_id, role, worker_num, server_endpoints)`` gives
them in code. ``GeneralRoleMaker`` and ``MPISymetricRoleMaker`` live in
:mod:`.role_makers_extra`.
"""

from __future__ import annotations

import enum
import os
import pickle

import numpy as np



class Role(enum.IntEnum):
    WORKER = 1
    SERVER = 2


class RoleMakerBase:
    """The questions fleet asks about this process; ``generate_role()`` answers them first."""

    def __init__(self) -> None:
        self._worker_endpoints: list = []
        self._server_endpoints: list = []
        self._current_id = 0
        self._role = Role.WORKER
        self._role_is_generated = False
        self._worker_num = 0

    def generate_role(self) -> None:
        raise NotImplementedError(f"{type(self).__name__}.generate_role")

    def _check(self, what: str) -> None:
        if not self._role_is_generated:
            self.generate_role()

    def is_worker(self) -> bool:
        self._check("is_worker")
        return self._role == Role.WORKER

    def is_server(self) -> bool:
        self._check("is_server")
        return self._role == Role.SERVER

    def is_first_worker(self) -> bool:
        return self.is_worker() and self._current_id == 0

    def worker_num(self) -> int:
        self._check("worker_num")
        return self._worker_num if self._worker_num else len(self._worker_endpoints)

    def worker_index(self) -> int:
        self._check("worker_index")
        return self._current_id

    def server_index(self) -> int:
        self._check("server_index")
        if self._role != Role.SERVER:
            raise ValueError(f"{type(self).__name__}.server_index: this process is not a server")
        return self._current_id

    def server_num(self) -> int:
        self._check("server_num")
        return len(self._server_endpoints)

    def get_trainer_endpoints(self) -> list:
        self._check("get_trainer_endpoints")
        return list(self._worker_endpoints)

    def get_pserver_endpoints(self) -> list:
        return list(self._server_endpoints)

    def _communicator(self):
        from oar_dist.collective import get_ring, make_backend, set_ring

        try:
            return get_ring(0, "role maker")
        except RuntimeError:
            backend = make_backend("mpi")
            set_ring(0, backend)
            return backend

    def barrier_worker(self) -> None:
        """Wait for every worker (over the job's communicator)."""
        if self.worker_num() > 1:
            self._communicator().barrier()

    barrier_all = barrier_worker

    def all_reduce_worker(self, input, output, mode: str = "sum") -> None:
        """``output[:] = `` the reduction of every worker's ``input`` (numpy arrays)."""
        arr = np.asarray(input)
        res = self._communicator().allreduce(arr, op=mode) if self.worker_num() > 1 else arr
        np.copyto(output, res.reshape(np.shape(output)))

    def all_gather(self, input):
        """Every worker's ``input`` (a number), in worker order."""
        if self.worker_num() == 1:
            return [input]
        return self._communicator().allgather(np.asarray([input])).tolist()

    def _all_to_all(self, buckets: list) -> list:
        """Exchange Python objects between workers: ``buckets[j]`` (a list) goes to worker j.

        Returns what every worker sent to this one, concatenated in worker order. The
        buckets travel pickled (peers of one job trust each other) through two allgathers
        of the job's communicator: the sizes, then the bytes.
        """
        n = self.worker_num()
        if len(buckets) != n:
            raise ValueError(f"_all_to_all: {n} buckets expected (one per worker), given {len(buckets)}")
        if n == 1:
            return list(buckets[0])
        comm = self._communicator()
        blobs = [pickle.dumps(list(b), protocol=pickle.HIGHEST_PROTOCOL) for b in buckets]
        sizes = comm.allgather(np.array([[len(b) for b in blobs]], np.int64)).reshape(n, n)
        joined = np.frombuffer(b"".join(blobs), np.uint8)
        buf = np.zeros((1, max(int(sizes.sum(axis=1).max()), 1)), np.uint8)
        buf[0, : joined.size] = joined
        everything = comm.allgather(buf)
        me = self.worker_index()
        out: list = []
        for sender in range(n):
            start = int(sizes[sender, :me].sum())
            out.extend(pickle.loads(everything[sender, start : start + int(sizes[sender, me])].tobytes()))
        return out

    def to_string(self) -> str:
        return (
            f"role: {self._role.name}, current_id: {self._current_id}, "
            f"worker_endpoints: {self._worker_endpoints}"
        )

    __str__ = to_string


class PaddleCloudRoleMaker(RoleMakerBase):
    """The role from the launcher's variables (``PADDLE_TRAINER_ID``, ``PADDLE_TRAINER_ENDPOINTS``...)."""

    def __init__(self, is_collective: bool = False) -> None:
        super().__init__()
        self._is_collective = is_collective

    def generate_role(self) -> None:
        if self._role_is_generated:
            return
        if not self._is_collective:
            self._generate_ps_role()
            return
        env = os.environ
        raw_id = env.get("PADDLE_TRAINER_ID", "0")
        eps = [e for e in env.get("PADDLE_TRAINER_ENDPOINTS", "").split(",") if e]
        current = env.get("PADDLE_CURRENT_ENDPOINT", "")
        if not eps:
            eps = [current or "127.0.0.1:6170"]  # a plain `python script.py`: a job of one
        try:
            current_id = int(raw_id)
        except ValueError:
            raise ValueError(
                f"PaddleCloudRoleMaker: PADDLE_TRAINER_ID must be an integer, given {raw_id!r}"
            ) from None
        num = env.get("PADDLE_TRAINERS_NUM")
        if num is not None and int(num) != len(eps):
            raise ValueError(
                f"PaddleCloudRoleMaker: PADDLE_TRAINERS_NUM={num} but PADDLE_TRAINER_ENDPOINTS "
                f"lists {len(eps)} endpoints ({','.join(eps)})"
            )
        if not 0 <= current_id < len(eps):
            raise ValueError(
                f"PaddleCloudRoleMaker: PADDLE_TRAINER_ID={current_id} is out of range for "
                f"{len(eps)} trainer endpoints ({','.join(eps)})"
            )
        self._current_id = current_id
        self._worker_endpoints = eps
        self._role = Role.WORKER
        self._role_is_generated = True


    def _generate_ps_role(self, workers: int | None = None, server_id: str | None = None) -> None:
        env = os.environ
        role = env.get("TRAINING_ROLE", "TRAINER")
        if role not in ("TRAINER", "PSERVER"):
            raise ValueError(
                f"PaddleCloudRoleMaker: TRAINING_ROLE must be TRAINER or PSERVER, given {role!r}"
            )
        servers = [e for e in env.get("PADDLE_PSERVERS_IP_PORT_LIST", "").split(",") if e]
        if not servers:
            raise ValueError(
                "PaddleCloudRoleMaker: PADDLE_PSERVERS_IP_PORT_LIST must list the parameter "
                "servers ('ip:port,ip:port')"
            )
        try:
            workers = workers or int(env.get("PADDLE_TRAINERS_NUM", "1"))
        except ValueError:
            raise ValueError("PaddleCloudRoleMaker: PADDLE_TRAINERS_NUM must be an integer") from None
        self._server_endpoints = servers
        self._worker_num = workers
        self._worker_endpoints = [f"trainer{i}" for i in range(workers)]
        if role == "TRAINER":
            self._role = Role.WORKER
            self._current_id = int(env.get("PADDLE_TRAINER_ID", "0"))
            if not 0 <= self._current_id < workers:
                raise ValueError(
                    f"PaddleCloudRoleMaker: PADDLE_TRAINER_ID={self._current_id} is out of range "
                    f"for PADDLE_TRAINERS_NUM={workers}"
                )
        elif server_id is not None:  # GeneralRoleMaker: PADDLE_PSERVER_ID
            self._role = Role.SERVER
            self._current_id = int(server_id)
            if not 0 <= self._current_id < len(servers):
                raise ValueError(
                    f"{type(self).__name__}: PADDLE_PSERVER_ID={server_id} is out of range for "
                    f"{len(servers)} pservers"
                )
        else:
            current = f"{env.get('POD_IP', '')}:{env.get('PADDLE_PORT', '')}"
            if current not in servers:
                raise ValueError(
                    f"PaddleCloudRoleMaker: this pserver's POD_IP:PADDLE_PORT {current!r} is not in "
                    f"PADDLE_PSERVERS_IP_PORT_LIST {servers}"
                )
            self._role = Role.SERVER
            self._current_id = servers.index(current)
        self._role_is_generated = True


class UserDefinedCollectiveRoleMaker(RoleMakerBase):
    """A role given in code: ``current_id`` of ``worker_endpoints``."""

    def __init__(self, current_id: int = 0, worker_endpoints: list | None = None) -> None:
        super().__init__()
        if not isinstance(current_id, int) or isinstance(current_id, bool) or current_id < 0:
            raise ValueError(
                f"UserDefinedCollectiveRoleMaker: current_id must be an int >= 0, given "
                f"{current_id!r}"
            )
        if not isinstance(worker_endpoints, list) or not worker_endpoints:
            raise ValueError(
                f"UserDefinedCollectiveRoleMaker: worker_endpoints must be a non-empty list of "
                f"'ip:port' strings, given {worker_endpoints!r}"
            )
        if current_id >= len(worker_endpoints):
            raise ValueError(
                f"UserDefinedCollectiveRoleMaker: current_id {current_id} is out of range for "
                f"{len(worker_endpoints)} worker_endpoints"
            )
        self._current_id = current_id
        self._worker_endpoints = list(worker_endpoints)

    def generate_role(self) -> None:
        self._role = Role.WORKER
        self._role_is_generated = True


class UserDefinedRoleMaker(RoleMakerBase):
    """A parameter-server role given in code (Fluid's signature)."""

    def __init__(
        self,
        current_id: int = 0,
        role: Role = Role.WORKER,
        worker_num: int = 0,
        server_endpoints: list | None = None,
    ) -> None:
        super().__init__()
        if role not in (Role.WORKER, Role.SERVER):
            raise ValueError(f"UserDefinedRoleMaker: role must be Role.WORKER or Role.SERVER, given {role!r}")
        if not isinstance(server_endpoints, list) or not server_endpoints:
            raise ValueError(
                f"UserDefinedRoleMaker: server_endpoints must be a non-empty list of 'ip:port', "
                f"given {server_endpoints!r}"
            )
        if not isinstance(worker_num, int) or worker_num < 1:
            raise ValueError(f"UserDefinedRoleMaker: worker_num must be >= 1, given {worker_num!r}")
        limit = worker_num if role == Role.WORKER else len(server_endpoints)
        if not isinstance(current_id, int) or not 0 <= current_id < limit:
            raise ValueError(
                f"UserDefinedRoleMaker: current_id {current_id!r} is out of range (0..{limit - 1})"
            )
        self._current_id = current_id
        self._role = Role(role)
        self._worker_num = worker_num
        self._worker_endpoints = [f"trainer{i}" for i in range(worker_num)]
        self._server_endpoints = list(server_endpoints)

    def generate_role(self) -> None:
        self._role_is_generated = True


def __getattr__(name: str):
    if name in ("GeneralRoleMaker", "MPISymetricRoleMaker"):
        from oar_dist.incubate.fleet.base import role_makers_extra

        return getattr(role_makers_extra, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "GeneralRoleMaker",
    "MPISymetricRoleMaker",
    "PaddleCloudRoleMaker",
    "Role",
    "RoleMakerBase",
    "UserDefinedCollectiveRoleMaker",
    "UserDefinedRoleMaker",
]
