"""``fluid.incubate.fleet.base.fleet_base``: what every fleet answers about the job.

:class:`Fleet` holds the role maker given to ``init`` and answers the questions both
fleets share (``is_worker``, ``worker_index``, ``worker_endpoints``, ``server_num``...,
``barrier_worker``, ``split_files``) by asking it; the collective fleet and the
parameter-server fleet subclass it. :class:`Mode` names the kinds of fleet.
"""

from __future__ import annotations

import enum
from typing import Any

from oar_dist import checks
from oar_dist.incubate.fleet.base.role_maker import RoleMakerBase


class Mode(enum.IntEnum):
    TRANSPILER = 1
    PSLIB = 2
    COLLECTIVE = 3


class Fleet:
    """A fleet's role questions, answered by the role maker ``init`` was given."""

    _INIT_EXAMPLE = "fleet.init(role_maker)"

    def __init__(self, mode: Mode) -> None:
        self._mode = Mode(mode)
        self._role_maker: RoleMakerBase | None = None

    def _role(self, what: str) -> RoleMakerBase:
        if self._role_maker is None:
            raise RuntimeError(
                f"fleet.{what}: call fleet.init(role_maker) first, e.g. {self._INIT_EXAMPLE}"
            )
        return self._role_maker

    def is_worker(self) -> bool:
        return self._role("is_worker").is_worker()

    def is_server(self) -> bool:
        return self._role("is_server").is_server()

    def is_first_worker(self) -> bool:
        return self._role("is_first_worker").is_first_worker()

    def worker_index(self) -> int:
        return self._role("worker_index").worker_index()

    def worker_num(self) -> int:
        return self._role("worker_num").worker_num()

    def worker_endpoints(self, to_string: bool = False) -> Any:
        eps = self._role("worker_endpoints").get_trainer_endpoints()
        return ",".join(eps) if to_string else eps

    def server_index(self) -> int:
        return self._role("server_index").server_index()

    def server_num(self) -> int:
        return self._role("server_num").server_num()

    def server_endpoints(self, to_string: bool = False) -> Any:
        eps = self._role("server_endpoints").get_pserver_endpoints()
        return ",".join(eps) if to_string else eps

    def barrier_worker(self) -> None:
        self._role("barrier_worker").barrier_worker()

    def all_reduce_worker(self, input: Any, output: Any, mode: str = "sum") -> None:
        self._role("all_reduce_worker").all_reduce_worker(input, output, mode)

    def split_files(self, files: list) -> list:
        """This worker's share of ``files``: contiguous blocks in worker order, the first
        ``len(files) % worker_num`` workers one file more (Fluid 1.8.5's own fails on
        Python 3)."""
        if not isinstance(files, list):
            checks.fail(
                "fleet.split_files",
                f"files must be a list of file names, given {type(files).__name__}",
                type_error=True,
            )
        n, me = self.worker_num(), self.worker_index()
        size, extra = divmod(len(files), n)
        begin = me * size + min(me, extra)
        return files[begin : begin + size + (1 if me < extra else 0)]


__all__ = ["Fleet", "Mode"]
