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
import pickle

import numpy as np

from oar_dist import checks


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
            raise ValueError(
                f"_all_to_all: {n} buckets expected (one per worker), given {len(buckets)}"
            )
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
            out.extend(
                pickle.loads(everything[sender, start : start + int(sizes[sender, me])].tobytes())
            )
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
        api = type(self).__name__
        # a plain `python script.py` (no launcher) is trainer 0 of a job of one
        current = checks.env_str(api, "PADDLE_CURRENT_ENDPOINT", "")
        if current:
            current = checks.endpoint(api, checks.env_name("PADDLE_CURRENT_ENDPOINT"), current)
        eps = checks.env_endpoints(api, "PADDLE_TRAINER_ENDPOINTS", [current or "127.0.0.1:6170"])
        current_id = checks.env_int(api, "PADDLE_TRAINER_ID", 0)
        num = checks.env_int(api, "PADDLE_TRAINERS_NUM", len(eps), minimum=1)
        if num != len(eps):
            checks.fail(
                api,
                f"environment variable PADDLE_TRAINERS_NUM={num} but PADDLE_TRAINER_ENDPOINTS "
                f"lists {len(eps)} endpoints ({','.join(eps)}): expected them to agree",
            )
        if current_id >= len(eps):
            checks.fail(
                api,
                f"environment variable PADDLE_TRAINER_ID must be in [0, {len(eps)}) for the "
                f"{len(eps)} endpoints of PADDLE_TRAINER_ENDPOINTS ({','.join(eps)}), given "
                f"{current_id}",
            )
        if current and current != eps[current_id]:
            checks.fail(
                api,
                f"environment variable PADDLE_CURRENT_ENDPOINT must be trainer {current_id}'s "
                f"endpoint {eps[current_id]!r} in PADDLE_TRAINER_ENDPOINTS, given {current!r}",
            )
        self._current_id = current_id
        self._worker_endpoints = eps
        self._role = Role.WORKER
        self._role_is_generated = True

    def _generate_ps_role(self, workers: int | None = None, server_id: str | None = None) -> None:
        api = type(self).__name__
        role = checks.env_str(api, "TRAINING_ROLE", expected="TRAINER or PSERVER", ps=True)
        if role not in ("TRAINER", "PSERVER"):
            checks.fail(
                api,
                f"environment variable TRAINING_ROLE must be TRAINER or PSERVER, given {role!r}",
            )
        servers = checks.env_endpoints(api, "PADDLE_PSERVERS_IP_PORT_LIST", ps=True)
        workers = workers or checks.env_int(api, "PADDLE_TRAINERS_NUM", minimum=1, ps=True)
        self._server_endpoints = servers
        self._worker_num = workers
        self._worker_endpoints = [f"trainer{i}" for i in range(workers)]
        if role == "TRAINER":
            self._role = Role.WORKER
            self._current_id = checks.env_int(api, "PADDLE_TRAINER_ID", ps=True)
            if self._current_id >= workers:
                checks.fail(
                    api,
                    f"environment variable PADDLE_TRAINER_ID must be in [0, {workers}) for "
                    f"PADDLE_TRAINERS_NUM={workers}, given {self._current_id}",
                )
        elif server_id is not None:  # GeneralRoleMaker: PADDLE_PSERVER_ID
            self._role = Role.SERVER
            self._current_id = checks.env_int(api, "PADDLE_PSERVER_ID", ps=True)
            if self._current_id >= len(servers):
                checks.fail(
                    api,
                    f"environment variable PADDLE_PSERVER_ID must be in [0, {len(servers)}) for the "
                    f"{len(servers)} pservers of PADDLE_PSERVERS_IP_PORT_LIST, given {server_id}",
                )
        else:
            ip = checks.env_str(api, "POD_IP", expected="this pserver's ip", ps=True)
            port = checks.env_int(api, "PADDLE_PORT", minimum=1, ps=True)
            current = checks.endpoint(
                api, "environment variables POD_IP:PADDLE_PORT", f"{ip}:{port}"
            )
            if current not in servers:
                checks.fail(
                    api,
                    f"this pserver's POD_IP:PADDLE_PORT must be one of PADDLE_PSERVERS_IP_PORT_LIST "
                    f"{servers}, given {current!r}",
                )
            self._role = Role.SERVER
            self._current_id = servers.index(current)
        self._role_is_generated = True


class UserDefinedCollectiveRoleMaker(RoleMakerBase):
    """A role given in code: ``current_id`` of ``worker_endpoints``."""

    def __init__(self, current_id: int = 0, worker_endpoints: list | None = None) -> None:
        super().__init__()
        api = "UserDefinedCollectiveRoleMaker"
        if not isinstance(worker_endpoints, list) or not worker_endpoints:
            checks.fail(
                api,
                f"worker_endpoints must be a non-empty list of 'ip:port' strings, given "
                f"{worker_endpoints!r}",
            )
        eps = checks.endpoints(api, "worker_endpoints", worker_endpoints)
        checks.index(api, "current_id", current_id, len(eps), f"{len(eps)} worker_endpoints")
        self._current_id = int(current_id)
        self._worker_endpoints = eps

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
        api = "UserDefinedRoleMaker"
        if role not in (Role.WORKER, Role.SERVER):
            checks.fail(api, f"role must be Role.WORKER or Role.SERVER, given {role!r}")
        if not isinstance(server_endpoints, list) or not server_endpoints:
            checks.fail(
                api,
                f"server_endpoints must be a non-empty list of 'ip:port', given "
                f"{server_endpoints!r}",
            )
        server_endpoints = checks.endpoints(api, "server_endpoints", server_endpoints)
        worker_num = checks.integer(api, "worker_num", worker_num, minimum=1)
        if role == Role.WORKER:
            checks.index(api, "current_id", current_id, worker_num, f"worker_num={worker_num}")
        else:
            count = len(server_endpoints)
            checks.index(api, "current_id", current_id, count, f"{count} server_endpoints")
        current_id = int(current_id)
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


__all__ = [  # noqa: F822 (the last two resolve through __getattr__, loaded on first use)
    "GeneralRoleMaker",
    "MPISymetricRoleMaker",
    "PaddleCloudRoleMaker",
    "Role",
    "RoleMakerBase",
    "UserDefinedCollectiveRoleMaker",
    "UserDefinedRoleMaker",
]
