"""DistributeTranspilerConfig: Fluid 1.8's attributes and defaults, checked when set."""

from __future__ import annotations

from typing import Any

_FIELDS: dict[str, Any] = {
    # Fluid 1.8.5's attributes (names and defaults from the oracle's dir())
    "slice_var_up": True,
    "split_method": None,
    "min_block_size": 8192,
    "enable_dc_asgd": False,
    "mode": "pserver",
    "print_log": False,
    "wait_port": True,
    "runtime_split_send_recv": False,
    "sync_mode": True,
    "half_async": False,
    "completely_not_async": False,
    "geo_sgd_mode": False,
    "geo_sgd_need_push_nums": 100,
    "nccl_comm_num": 1,
    "use_hierarchical_allreduce": False,
    "hierarchical_allreduce_inter_nranks": 0,
    "collective_mode": None,
    # oar: which collective backend c_comm_init uses, and bucketed gradient all-reduce
    "backend": "mpi",
    "fuse_all_reduce_ops": True,
}

MODES = ("pserver", "nccl2", "collective")
COLLECTIVE_MODES = ("grad_allreduce", "local_sgd")


class DistributeTranspilerConfig:
    """Settings of :class:`DistributeTranspiler` (``mode``: ``pserver``, ``nccl2`` or ``collective``)."""

    __slots__ = tuple(_FIELDS)

    def __init__(self, **kwargs: Any) -> None:
        for name, default in _FIELDS.items():
            object.__setattr__(self, name, default)
        for name, value in kwargs.items():
            setattr(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _FIELDS:
            raise AttributeError(
                f"DistributeTranspilerConfig has no attribute '{name}' (it has {sorted(_FIELDS)})"
            )
        if name == "mode" and value not in MODES:
            raise ValueError(
                f"DistributeTranspilerConfig.mode must be one of {list(MODES)}, given {value!r}"
            )
        if name == "collective_mode" and value is not None and value not in COLLECTIVE_MODES:
            raise ValueError(
                f"DistributeTranspilerConfig.collective_mode must be one of "
                f"{list(COLLECTIVE_MODES)}, given {value!r}"
            )
        if name == "nccl_comm_num" and (not isinstance(value, int) or value < 1):
            raise ValueError(
                f"DistributeTranspilerConfig.nccl_comm_num must be an int >= 1, given {value!r}"
            )
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={getattr(self, k)!r}" for k in _FIELDS)
        return f"DistributeTranspilerConfig({body})"
