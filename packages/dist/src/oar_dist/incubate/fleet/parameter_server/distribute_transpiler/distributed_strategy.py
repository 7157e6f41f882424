"""Fleet's parameter-server strategies (``StrategyFactory``): which transpile mode to use.

``SyncStrategy`` transpiles with ``sync_mode=True`` (every step waits for all
trainers and applies the averaged gradient); ``AsyncStrategy`` with
``sync_mode=False``; ``HalfAsyncStrategy`` with ``sync_mode=False`` and
``half_async=True`` (the pservers apply each trainer's gradients as they arrive,
as in async; each trainer averages the gradients of
``communicator_max_merge_var_num`` steps, sends them with a barrier and waits for
the parameters: see ``oar_dist.pserver.half_async``); ``GeoStrategy``
sets ``geo_sgd_mode`` (GEO-SGD). Each carries its :class:`DistributeTranspilerConfig`
(``get_program_config``).
"""

from __future__ import annotations

from typing import Any

from oar_dist import checks
from oar_dist.transpiler import DistributeTranspilerConfig


class TrainerRuntimeConfig:
    """Fluid's trainer runtime flags (communicator settings): recorded; half-async trainers
    use ``communicator_max_merge_var_num`` (``fleet.init_worker``), the rest has no effect."""

    def __init__(self) -> None:
        self.runtime_configs: dict = {}

    def get_communicator_flags(self) -> dict:
        return dict(self.runtime_configs)


class ServerRuntimeConfig:
    """Fluid's server runtime flags: recorded, without effect here."""

    def __init__(self) -> None:
        self._rpc_send_thread_num = 12
        self._rpc_get_thread_num = 12
        self._rpc_prefetch_thread_num = 12


class DistributedStrategy:
    sync = True
    half_async = False

    def __init__(self) -> None:
        self._program_config = DistributeTranspilerConfig()
        self._program_config.sync_mode = self.sync
        self._program_config.half_async = self.half_async
        self._trainer_runtime_config = TrainerRuntimeConfig()
        self._server_runtime_config = ServerRuntimeConfig()
        self._build_strategy: Any = None
        self._execute_strategy: Any = None
        self.debug_opt: Any = None

    def get_program_config(self) -> DistributeTranspilerConfig:
        return self._program_config

    def set_program_config(self, config: Any) -> None:
        if isinstance(config, DistributeTranspilerConfig):
            self._program_config = config
        elif isinstance(config, dict):
            for k, v in config.items():
                setattr(self._program_config, k, v)
        else:
            checks.fail(
                f"{type(self).__name__}.set_program_config",
                f"config must be a DistributeTranspilerConfig or a dict, given "
                f"{type(config).__name__}",
                type_error=True,
            )

    def get_trainer_runtime_config(self) -> TrainerRuntimeConfig:
        return self._trainer_runtime_config

    def set_trainer_runtime_config(self, config: Any) -> None:
        self._trainer_runtime_config.runtime_configs.update(dict(config))

    def get_server_runtime_config(self) -> ServerRuntimeConfig:
        return self._server_runtime_config

    def set_server_runtime_config(self, config: Any) -> None:
        for k, v in dict(config).items():
            setattr(self._server_runtime_config, k, v)

    def get_build_strategy(self) -> Any:
        return self._build_strategy

    def set_build_strategy(self, strategy: Any) -> None:
        self._build_strategy = strategy

    def get_execute_strategy(self) -> Any:
        return self._execute_strategy

    def set_execute_strategy(self, strategy: Any) -> None:
        self._execute_strategy = strategy


class SyncStrategy(DistributedStrategy):
    sync = True


class AsyncStrategy(DistributedStrategy):
    sync = False


class HalfAsyncStrategy(DistributedStrategy):
    sync = False
    half_async = True


class GeoStrategy(DistributedStrategy):
    """GEO-SGD: trainers train locally and every ``update_frequency`` steps push their
    parameters' change (divided by the trainer count) to the pservers, then continue from
    the pservers' values (see ``oar_dist.kernels.geo``)."""

    sync = False

    def __init__(self, update_frequency: int = 100) -> None:
        api = "StrategyFactory.create_geo_strategy"
        update_frequency = checks.integer(api, "update_frequency", update_frequency, minimum=1)
        super().__init__()
        self._program_config.geo_sgd_mode = True
        self._program_config.geo_sgd_need_push_nums = update_frequency
        self._program_config.runtime_split_send_recv = True


class StrategyFactory:
    @staticmethod
    def create_sync_strategy() -> SyncStrategy:
        return SyncStrategy()

    @staticmethod
    def create_half_async_strategy() -> HalfAsyncStrategy:
        return HalfAsyncStrategy()

    @staticmethod
    def create_async_strategy() -> AsyncStrategy:
        return AsyncStrategy()

    @staticmethod
    def create_geo_strategy(update_frequency: int = 100) -> GeoStrategy:
        return GeoStrategy(update_frequency)
