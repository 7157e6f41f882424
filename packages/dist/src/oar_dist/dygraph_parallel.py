"""``fluid.dygraph.parallel``: multi-process data parallel training in imperative mode.

``ParallelEnv`` (alias ``Env``) reads the variables ``python -m
oar.distributed.launch`` sets; ``prepare_context`` opens the communicator
(ring 0 on the MPI backend); ``DataParallel`` wraps a layer so that
``scale_loss`` + ``backward`` + ``apply_collective_grads`` leave every rank
with the mean of all ranks' gradients, as one process on the whole batch would.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from oar.api import Layer, SelectedRows, in_dygraph_mode, with_user_line

from oar_dist import checks
from oar_dist.collective import CollectiveBackend, get_ring, make_backend, set_ring
from oar_dist.collective.base import DEFAULT_BUCKET_BYTES

_DENSE, _SPARSE = 1, 2


class ParallelEnv:
    """This process's place in the job, from the launcher's variables (defaults: one rank)."""

    def __init__(self) -> None:
        api = "ParallelEnv"
        self._nranks = checks.env_int(api, "PADDLE_TRAINERS_NUM", 1, minimum=1)
        self._local_rank = checks.env_int(api, "PADDLE_TRAINER_ID", 0)
        gpus = checks.env_str(api, "FLAGS_selected_gpus", "0").split(",")[0].strip()
        if not gpus.isdigit():
            checks.fail(
                api,
                f"environment variable FLAGS_selected_gpus must list device ids like 0,1, "
                f"given {os.environ.get('FLAGS_selected_gpus')!r}",
            )
        self._dev_id = int(gpus)
        eps = checks.env_endpoints(api, "PADDLE_TRAINER_ENDPOINTS", [])
        self._trainer_endpoints = eps or [""]
        self._current_endpoint = checks.env_str(api, "PADDLE_CURRENT_ENDPOINT", "")
        if self._local_rank >= self._nranks:
            checks.fail(
                api,
                f"environment variable PADDLE_TRAINER_ID must be in [0, {self._nranks}) for "
                f"PADDLE_TRAINERS_NUM={self._nranks}, given {self._local_rank}",
            )
        if eps and len(eps) != self._nranks:
            checks.fail(
                api,
                f"environment variable PADDLE_TRAINER_ENDPOINTS must list PADDLE_TRAINERS_NUM="
                f"{self._nranks} endpoints, given {len(eps)} ({','.join(eps)})",
            )

    @property
    def nranks(self) -> int:
        return self._nranks

    @property
    def local_rank(self) -> int:
        return self._local_rank

    @property
    def dev_id(self) -> int:
        return self._dev_id

    @property
    def current_endpoint(self) -> str:
        return self._current_endpoint

    @property
    def trainer_endpoints(self) -> list:
        return self._trainer_endpoints

    def __repr__(self) -> str:
        return (
            f"ParallelEnv(nranks={self.nranks}, local_rank={self.local_rank}, "
            f"dev_id={self.dev_id}, current_endpoint={self.current_endpoint!r})"
        )


Env = ParallelEnv


class ParallelStrategy:
    """What ``prepare_context`` returns and ``DataParallel`` takes: the job's shape."""

    def __init__(self) -> None:
        self.nranks = 1
        self.local_rank = 0
        self.trainer_endpoints: list = []
        self.current_endpoint = ""

    def __repr__(self) -> str:
        return f"ParallelStrategy(nranks={self.nranks}, local_rank={self.local_rank})"


def _strategy_from_env() -> ParallelStrategy:
    env = ParallelEnv()
    strategy = ParallelStrategy()
    strategy.nranks = env.nranks
    strategy.local_rank = env.local_rank
    strategy.trainer_endpoints = env.trainer_endpoints
    strategy.current_endpoint = env.current_endpoint
    return strategy


def _communicator(strategy: ParallelStrategy, who: str) -> CollectiveBackend:
    """Ring 0, opened on the MPI backend when this process has none yet; checked against the job."""
    try:
        backend = get_ring(0, who)
    except RuntimeError:
        backend = make_backend("mpi")
        set_ring(0, backend)
    if backend.size != strategy.nranks or backend.rank != strategy.local_rank:
        raise RuntimeError(
            f"{who}: the job has {strategy.nranks} ranks and this is rank {strategy.local_rank} "
            f"(PADDLE_TRAINERS_NUM / PADDLE_TRAINER_ID), but its communicator is rank "
            f"{backend.rank} of {backend.size}: start the script with "
            f"python -m oar.distributed.launch --nproc_per_node {strategy.nranks} script.py"
        )
    return backend


def prepare_context(strategy: ParallelStrategy | None = None) -> ParallelStrategy:
    """Open the communicator of a multi-process dygraph job; the strategy for ``DataParallel``."""
    if not in_dygraph_mode():
        raise RuntimeError(
            "prepare_context: call it in dygraph mode (inside `with fluid.dygraph.guard(place):`)"
        )
    if strategy is None:
        strategy = _strategy_from_env()
    if strategy.nranks >= 2:
        _communicator(strategy, "prepare_context")
    return strategy


class DataParallel(Layer):
    """Run ``layers`` on this rank's share of the data; average gradients over the ranks."""

    def __init__(self, layers: Layer, strategy: ParallelStrategy | None = None) -> None:
        if not isinstance(layers, Layer):
            checks.fail(
                "DataParallel",
                f"'layers' must be a dygraph Layer, given {type(layers).__name__}",
                type_error=True,
            )
        super().__init__(layers.full_name() + "_data_parallel")
        self._layers = layers
        self._strategy = strategy if strategy is not None else prepare_context()
        self._synced: set = set()
        self._sync_params()

    @property
    def nranks(self) -> int:
        return self._strategy.nranks

    def _backend(self) -> CollectiveBackend:
        return _communicator(self._strategy, "DataParallel")

    def _sync_params(self) -> None:
        """Start every rank from rank 0's parameter values (and any created since)."""
        if self.nranks < 2:
            return
        params = [p for p in self._layers.parameters() if id(p) not in self._synced]
        backend = self._backend()
        for p in params:
            if p._value is not None:
                p._value = backend.broadcast(np.asarray(p._value), root=0)
                self._synced.add(id(p))

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self._layers(*inputs, **kwargs)

    def scale_loss(self, loss: Any) -> Any:
        """``loss / nranks``: the summed gradients of the ranks are then their mean."""
        if self.nranks < 2:
            return loss
        from oar.fluid import layers

        return layers.scale(loss, scale=1.0 / self.nranks)

    def apply_collective_grads(self) -> None:
        """Sum every trainable parameter's gradient over the ranks (call after ``backward``)."""
        if self.nranks < 2:
            return
        self._sync_params()
        backend = self._backend()
        params = [p for p in self._layers.parameters() if p.trainable]
        kinds = np.array(
            [
                0 if p._grad is None else (_SPARSE if isinstance(p._grad, SelectedRows) else _DENSE)
                for p in params
            ],
            dtype=np.int32,
        )
        # a parameter some rank has no gradient for still gets the others' (zeros here)
        kinds = backend.allreduce(kinds, op="max")
        dense = [p for p, k in zip(params, kinds) if k == _DENSE]
        grads = [self._dense_grad(p) for p in dense]
        for p, g in zip(dense, backend.allreduce_many(grads, "sum", DEFAULT_BUCKET_BYTES)):
            p._grad = g
        for p, k in zip(params, kinds):
            if k == _SPARSE:
                p._grad = self._sparse_sum(backend, p)

    @staticmethod
    def _dense_grad(p: Any) -> np.ndarray:
        g = p._grad
        if g is None:
            return np.zeros(p.shape, dtype=p.dtype)
        if isinstance(g, SelectedRows):
            raise TypeError(
                f"DataParallel.apply_collective_grads: parameter '{p.name}' has a sparse "
                f"gradient on this rank and dense ones on others: build the layer identically "
                f"on every rank"
            )
        return np.asarray(g)

    @staticmethod
    def _sparse_sum(backend: CollectiveBackend, p: Any) -> SelectedRows:
        """All ranks' rows of a sparse gradient (rows may repeat: their sum is the gradient)."""
        g = p._grad
        if g is None:
            g = SelectedRows([], p.shape[0], np.zeros([0] + list(p.shape[1:]), dtype=p.dtype))
        elif not isinstance(g, SelectedRows):
            g = SelectedRows(range(p.shape[0]), p.shape[0], np.asarray(g))
        rows = backend.allgather(g.row_array.astype(np.int64))
        values = backend.allgather(np.asarray(g.value))
        return SelectedRows(rows, g.height(), values)

    # the wrapper adds no state of its own: checkpoints load into the bare layer and back
    def state_dict(
        self,
        destination: dict | None = None,
        include_sublayers: bool = True,
        structured_name_prefix: str = "",
    ) -> Any:
        return self._layers.state_dict(destination, include_sublayers, structured_name_prefix)

    def set_dict(
        self, stat_dict: dict, include_sublayers: bool = True, use_structured_name: bool = True
    ) -> None:
        self._layers.set_dict(stat_dict, include_sublayers, use_structured_name)

    load_dict = set_dict
    set_state_dict = set_dict


# errors of the constructor and of the wrapped layer's call name DataParallel and the user's
# line, as core's dygraph layers' do
for _meth in ("__init__", "forward"):
    setattr(DataParallel, _meth, with_user_line(DataParallel.__dict__[_meth], "DataParallel"))

__all__ = ["DataParallel", "Env", "ParallelEnv", "ParallelStrategy", "prepare_context"]
