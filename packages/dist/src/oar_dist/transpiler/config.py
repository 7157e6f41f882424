"""DistributeTranspilerConfig: Fluid 1.8's attributes and defaults, checked when set."""

from __future__ import annotations

import difflib
from typing import Any

from oar_dist import checks

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
API = "DistributeTranspilerConfig"
_FLAGS = tuple(k for k, v in _FIELDS.items() if isinstance(v, bool))
_COUNTS = {  # int fields and their least value
    "min_block_size": 1,
    "geo_sgd_need_push_nums": 1,
    "nccl_comm_num": 1,
    "hierarchical_allreduce_inter_nranks": 0,
}


def _check(name: str, value: Any) -> None:
    what = name
    if name == "mode":
        checks.one_of(API, what, value, MODES)
    elif name == "collective_mode" and value is not None:
        checks.one_of(API, what, value, COLLECTIVE_MODES)
    elif name in _FLAGS:
        checks.flag(API, what, value)
    elif name in _COUNTS:
        checks.integer(API, what, value, minimum=_COUNTS[name])
    elif name == "backend":
        _check_backend(what, value)


def _check_backend(what: str, value: Any) -> None:
    """A name in the ``collective_backends`` registry (``mpi``, ``threads``, ``nccl``...)."""
    from oar.api import registries

    names = sorted(registries().collective_backends.names())
    if not isinstance(value, str):
        checks.fail(
            API,
            f"{what} must name a collective backend (one of {names}), given {value!r}",
            type_error=True,
        )
    if value not in names:
        close = difflib.get_close_matches(value, names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        checks.fail(
            API,
            f"{what} must be a registered collective backend, one of {names}, given "
            f"{value!r}{hint}",
        )


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
        _check(name, value)
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={getattr(self, k)!r}" for k in _FIELDS)
        return f"DistributeTranspilerConfig({body})"
