"""``fluid.incubate.fleet.parameter_server.distribute_transpiler``: fleet over parameter servers.

::

    fleet.init(role_maker.PaddleCloudRoleMaker())      # TRAINING_ROLE, PADDLE_PSERVERS_IP_PORT_LIST...
    opt = fleet.distributed_optimizer(fluid.optimizer.SGD(0.1), StrategyFactory.create_sync_strategy())
    opt.minimize(loss)
    if fleet.is_server():
        fleet.init_server()                            # or init_server(model_dir) to resume
        fleet.run_server()                             # returns when every worker stopped
    else:
        fleet.init_worker()
        exe.run(fleet.startup_program)                 # pulls the pservers' parameters
        ... exe.run(fleet.main_program, feed=..., fetch_list=[loss]) ...
        fleet.save_persistables(exe, dirname)          # first worker; pservers save their state too
        fleet.stop_worker()

``minimize`` runs the optimizer's ``minimize`` then :class:`DistributeTranspiler`
in pserver mode with the strategy's config (``sync_mode``, ``half_async``).
"""

from __future__ import annotations

from typing import Any

from oar.api import CPUPlace, Executor, default_main_program, default_startup_program

from oar_dist import checks
from oar_dist.incubate.fleet.base.fleet_base import Fleet, Mode
from oar_dist.incubate.fleet.base.role_maker import PaddleCloudRoleMaker, RoleMakerBase
from oar_dist.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy import (
    AsyncStrategy,
    DistributedStrategy,
    HalfAsyncStrategy,
    StrategyFactory,
    SyncStrategy,
)
from oar_dist.transpiler import DistributeTranspiler, DistributeTranspilerConfig


class FleetTranspiler(Fleet):
    """The parameter-server fleet: the job's roles, its programs, server and worker life cycle."""

    def __init__(self) -> None:
        super().__init__(Mode.TRANSPILER)
        self._transpiler: DistributeTranspiler | None = None
        self._executor = Executor(CPUPlace())
        self.main_program: Any = None
        self.startup_program: Any = None
        self._origin_program: Any = None
        self._strategy: Any = None

    # --- roles ------------------------------------------------------------------------------
    def init(self, role_maker: RoleMakerBase | None = None) -> None:
        if role_maker is None:
            role_maker = PaddleCloudRoleMaker()
        if not isinstance(role_maker, RoleMakerBase):
            checks.fail(
                "fleet.init",
                f"role_maker must be a role maker (PaddleCloudRoleMaker, UserDefinedRoleMaker), "
                f"given {type(role_maker).__name__}",
                type_error=True,
            )
        role_maker.generate_role()
        if not role_maker.get_pserver_endpoints():
            raise ValueError(
                "fleet.init: this role maker names no parameter servers; use "
                "fluid.incubate.fleet.collective for collective training"
            )
        self._role_maker = role_maker

    def _current_endpoint(self) -> str:
        return self.server_endpoints()[self.server_index()]

    # --- programs ---------------------------------------------------------------------------
    def distributed_optimizer(self, optimizer: Any, strategy: Any = None) -> TranspilerOptimizer:
        self._role("distributed_optimizer")
        return TranspilerOptimizer(optimizer, strategy, self)

    def _transpile(self, config: DistributeTranspilerConfig, startup: Any) -> None:
        rm = self._role("distributed_optimizer")
        self._origin_program = default_main_program().clone()
        t = DistributeTranspiler(config=config)
        t.transpile(
            trainer_id=rm.worker_index() if rm.is_worker() else 0,
            program=default_main_program(),
            pservers=self.server_endpoints(to_string=True),
            trainers=rm.worker_num(),
            sync_mode=config.sync_mode,
            startup_program=startup,
        )
        self._transpiler = t
        if rm.is_worker():
            self.main_program = t.get_trainer_program()
            self.startup_program = startup
        else:
            ep = self._current_endpoint()
            self.main_program = t.get_pserver_program(ep)
            self.startup_program = t.get_startup_program(ep, self.main_program)

    def _programs(self, what: str) -> None:
        if self.main_program is None:
            raise RuntimeError(
                f"fleet.{what}: call fleet.distributed_optimizer(...).minimize(loss) first"
            )

    # --- server -----------------------------------------------------------------------------
    def init_server(self, model_dir: str | None = None) -> None:
        """Initialise this pserver's variables, then (``model_dir``) load them from a checkpoint."""
        if not self.is_server():
            raise RuntimeError("fleet.init_server: this process is a worker, not a server")
        self._programs("init_server")
        self._executor.run(self.startup_program)
        if model_dir is not None:
            from oar import fluid

            fluid.io.load_persistables(self._executor, model_dir, self.main_program)

    def run_server(self) -> None:
        """Serve the workers until every one of them stopped (``stop_worker``)."""
        if not self.is_server():
            raise RuntimeError("fleet.run_server: this process is a worker, not a server")
        self._programs("run_server")
        self._executor.run(self.main_program)

    # --- worker -----------------------------------------------------------------------------
    def init_worker(self) -> None:
        """Start the worker's side: the half-async strategy's communicator flags
        (``communicator_max_merge_var_num``) take effect; the worker's startup program pulls
        the pservers' parameters."""
        if not self.is_worker():
            raise RuntimeError("fleet.init_worker: this process is a server, not a worker")
        from oar_dist.pserver import half_async

        strategy = self._strategy
        if isinstance(strategy, DistributedStrategy):
            half_async.configure(strategy.get_trainer_runtime_config().get_communicator_flags())

    def stop_worker(self) -> None:
        """Tell every pserver this worker is done (as ``exe.close()``)."""
        from oar_dist.pserver import client

        client.close_all()

    def save_persistables(self, executor: Any, dirname: str, main_program: Any = None) -> None:
        """On the first worker: its persistables, and every pserver's (optimizer state included)
        into the same directory, so ``init_server(dirname)`` resumes the whole job."""
        if not self.is_first_worker():
            return
        import numpy as np
        from oar import fluid

        from oar_dist.pserver import wire
        from oar_dist.pserver.client import get_client

        self._programs("save_persistables")
        prog = main_program if main_program is not None else self.main_program
        fluid.io.save_persistables(executor, dirname, prog)
        if getattr(prog, "_oar_save_persistables", None) is not None:
            return  # the transpiled trainer program saved the pservers' variables too
        name = np.frombuffer(str(dirname).encode(), dtype=np.uint8)
        for ep in self.server_endpoints():
            get_client(ep, self.worker_index()).request(
                wire.Message(wire.SAVE, tensors=(("dirname", name),))
            )

    def save_inference_model(
        self,
        executor: Any,
        dirname: str,
        feeded_var_names: Any,
        target_vars: Any,
        main_program: Any = None,
        export_for_deployment: bool = True,
    ) -> None:
        """The untranspiled forward program and its parameters, on the first worker."""
        if not self.is_first_worker():
            return
        from oar import fluid

        fluid.io.save_inference_model(
            dirname,
            feeded_var_names,
            target_vars,
            executor,
            main_program=main_program if main_program is not None else self._origin_program,
            export_for_deployment=export_for_deployment,
        )


class TranspilerOptimizer:
    """``fleet.distributed_optimizer(opt, strategy)``: ``minimize`` = the optimizer's + transpile."""

    def __init__(self, optimizer: Any, strategy: Any, fleet: FleetTranspiler) -> None:
        if strategy is None:
            strategy = SyncStrategy()
        if isinstance(strategy, DistributeTranspilerConfig):
            config = strategy
        elif isinstance(strategy, DistributedStrategy):
            config = strategy.get_program_config()
        else:
            checks.fail(
                "fleet.distributed_optimizer",
                f"strategy must come from StrategyFactory (or be a DistributeTranspilerConfig), "
                f"given {type(strategy).__name__}",
                type_error=True,
            )
        self._optimizer = checks.optimizer("fleet.distributed_optimizer", optimizer)
        self._config = config
        self._fleet = fleet
        fleet._strategy = strategy

    def minimize(
        self,
        loss: Any,
        scope: Any = None,
        startup_program: Any = None,
        parameter_list: Any = None,
        no_grad_set: Any = None,
    ) -> Any:
        startup = startup_program if startup_program is not None else default_startup_program()
        result = self._optimizer.minimize(
            loss,
            startup_program=startup,
            parameter_list=parameter_list,
            no_grad_set=no_grad_set,
        )
        self._fleet._transpile(self._config, startup)
        return result


fleet = FleetTranspiler()

__all__ = [
    "AsyncStrategy",
    "FleetTranspiler",
    "HalfAsyncStrategy",
    "StrategyFactory",
    "SyncStrategy",
    "TranspilerOptimizer",
    "fleet",
]
