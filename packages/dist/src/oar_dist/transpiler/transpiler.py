"""DistributeTranspiler: rewrites a single-process program for a multi-process job.

The transpiler is a front door over modes: ``MODES[config.mode]`` is a class
whose ``transpile(...)`` does the work and which answers the ``get_*``
program queries. ``nccl2`` and ``collective`` live in :mod:`.collective`;
``pserver`` (the parameter-server rewrite) in :mod:`.pserver`.
"""

from __future__ import annotations

from typing import Any

from oar_dist import checks
from oar_dist.transpiler.collective import CollectiveMode, Nccl2Mode
from oar_dist.transpiler.config import DistributeTranspilerConfig
from oar_dist.transpiler.pserver import PserverMode

MODES: dict[str, type] = {"pserver": PserverMode, "nccl2": Nccl2Mode, "collective": CollectiveMode}
API = "DistributeTranspiler.transpile"


def check_transpile_args(
    mode: str, trainer_id: Any, pservers: Any, trainers: Any, sync_mode: Any, current: Any
) -> None:
    """Refuse what no mode can run: malformed endpoints, ports out of range, trainer_id
    outside the trainers, a current_endpoint that is not this trainer's."""
    checks.integer(API, "trainer_id", trainer_id)
    checks.flag(API, "sync_mode", sync_mode)
    checks.endpoint(API, "current_endpoint", current)
    if mode == "pserver":
        checks.endpoints(API, "pservers", pservers)
        if isinstance(trainers, str):
            count = len(checks.endpoints(API, "trainers", trainers))
        else:
            count = checks.integer(API, "trainers (the number of trainers)", trainers, minimum=1)
        checks.index(API, "trainer_id", trainer_id, count, f"{count} trainers")
        return
    if not isinstance(trainers, (str, list, tuple)):
        checks.fail(
            API,
            f"trainers must list every trainer's endpoint in mode '{mode}', comma-separated "
            f'("ip1:port,ip2:port"), given {trainers!r}',
        )
    eps = checks.endpoints(API, f"trainers (mode '{mode}')", trainers)
    checks.index(API, "trainer_id", trainer_id, len(eps), f"{len(eps)} trainers {eps}")
    if current.strip() != eps[trainer_id]:
        checks.fail(
            API,
            f"current_endpoint must be trainer {trainer_id}'s endpoint {eps[trainer_id]!r} "
            f"(trainers[trainer_id], mode '{mode}'), given {current!r}",
        )


def register_mode(name: str, cls: type) -> None:
    """Make ``config.mode = name`` use ``cls`` (how the pserver runtime plugs in)."""
    MODES[name] = cls


class DistributeTranspiler:
    """Fluid's ``fluid.DistributeTranspiler(config=None)``."""

    def __init__(self, config: DistributeTranspilerConfig | None = None) -> None:
        if config is not None and not isinstance(config, DistributeTranspilerConfig):
            raise TypeError(
                f"DistributeTranspiler: config must be a fluid.DistributeTranspilerConfig, given "
                f"{type(config).__name__}"
            )
        self.config = config if config is not None else DistributeTranspilerConfig()
        self._impl: Any = None

    def transpile(
        self,
        trainer_id: int,
        program: Any = None,
        pservers: str = "127.0.0.1:6174",
        trainers: int | str = 1,
        sync_mode: bool = True,
        startup_program: Any = None,
        current_endpoint: str = "127.0.0.1:6174",
        slice_var_up: bool | None = None,
    ) -> None:
        """Rewrite ``program`` (default: the default main program) and ``startup_program`` in place
        for trainer ``trainer_id`` of the job described by ``trainers`` (and ``pservers``)."""
        from oar.api import default_main_program, default_startup_program

        check_transpile_args(
            self.config.mode, trainer_id, pservers, trainers, sync_mode, current_endpoint
        )
        trainer_id = int(trainer_id)
        if slice_var_up is not None:  # the seed guide's keyword (Fluid 1.8 has it on the config)
            self.config.slice_var_up = bool(slice_var_up)
        impl = MODES[self.config.mode](self.config)
        impl.transpile(
            trainer_id=trainer_id,
            program=program if program is not None else default_main_program(),
            pservers=pservers,
            trainers=trainers,
            sync_mode=sync_mode,
            startup_program=startup_program
            if startup_program is not None
            else default_startup_program(),
            current_endpoint=current_endpoint,
        )
        self._impl = impl

    def _transpiled(self, what: str) -> Any:
        if self._impl is None:
            raise RuntimeError(f"DistributeTranspiler.{what}: call transpile(...) first")
        return self._impl

    def get_trainer_program(self, wait_port: bool = True) -> Any:
        """The program each trainer runs."""
        return self._transpiled("get_trainer_program").get_trainer_program(wait_port)

    def get_pserver_program(self, endpoint: str) -> Any:
        return self._transpiled("get_pserver_program").get_pserver_program(endpoint)

    def get_pserver_programs(self, endpoint: str) -> Any:
        return self._transpiled("get_pserver_programs").get_pserver_programs(endpoint)

    def get_startup_program(
        self, endpoint: str | None = None, pserver_program: Any = None, startup_program: Any = None
    ) -> Any:
        return self._transpiled("get_startup_program").get_startup_program(
            endpoint, pserver_program, startup_program
        )
