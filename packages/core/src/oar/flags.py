"""Fluid's global flags: ``fluid.set_flags`` / ``fluid.get_flags`` and ``FLAGS_*`` env variables.

Fluid 1.8 reads ``FLAGS_<name>`` from the environment at start-up and lets
programs change the public ones with ``fluid.set_flags({...})``. oar accepts
the flags Fluid 1.8 users set (the CPU build's public list plus the GPU and
distributed ones), so scripts that set them keep working. Flags that mean
something here take effect (``FLAGS_check_nan_inf``, ``FLAGS_paddle_num_threads``,
``FLAGS_cpu_deterministic``); the rest are recorded and have no effect; each
flag's effect is listed in ``docs/flags.md``. Unknown names raise ``ValueError``
as in Fluid.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

# name -> (type, default). Types are Fluid's gflags types: bool, int, float, str.
_SPEC: dict[str, tuple[type, Any]] = {
    # effective in oar
    "FLAGS_check_nan_inf": (bool, False),
    "FLAGS_paddle_num_threads": (int, 1),
    "FLAGS_cpu_deterministic": (bool, False),
    # memory and allocators (oar frees temporaries after their last use regardless)
    "FLAGS_eager_delete_tensor_gb": (float, 0.0),
    "FLAGS_fast_eager_deletion_mode": (bool, True),
    "FLAGS_memory_fraction_of_eager_deletion": (float, 1.0),
    "FLAGS_allocator_strategy": (str, "auto_growth"),
    "FLAGS_fraction_of_cpu_memory_to_use": (float, 1.0),
    "FLAGS_initial_cpu_memory_in_mb": (int, 500),
    "FLAGS_init_allocated_mem": (bool, False),
    "FLAGS_use_pinned_memory": (bool, True),
    "FLAGS_use_system_allocator": (bool, False),
    "FLAGS_free_idle_chunk": (bool, False),
    "FLAGS_free_when_no_cache_hit": (bool, False),
    # GPU build
    "FLAGS_fraction_of_gpu_memory_to_use": (float, 0.92),
    "FLAGS_initial_gpu_memory_in_mb": (int, 0),
    "FLAGS_reallocate_gpu_memory_in_mb": (int, 0),
    "FLAGS_gpu_memory_limit_mb": (int, 0),
    "FLAGS_selected_gpus": (str, ""),
    "FLAGS_cudnn_deterministic": (bool, False),
    "FLAGS_cudnn_exhaustive_search": (bool, False),
    "FLAGS_cudnn_batchnorm_spatial_persistent": (bool, False),
    "FLAGS_conv_workspace_size_limit": (int, 512),
    "FLAGS_enable_cublas_tensor_op_math": (bool, False),
    "FLAGS_sync_nccl_allreduce": (bool, True),
    "FLAGS_multiple_of_cupti_buffer_size": (int, 1),
    # executors and graphs
    "FLAGS_use_mkldnn": (bool, False),
    "FLAGS_enable_parallel_graph": (bool, False),
    "FLAGS_inner_op_parallelism": (int, 0),
    "FLAGS_fuse_parameter_groups_size": (int, 1),
    "FLAGS_fuse_parameter_memory_size": (float, -1.0),
    "FLAGS_benchmark": (bool, False),
    "FLAGS_reader_queue_speed_test_mode": (bool, False),
    "FLAGS_print_sub_graph_dir": (str, ""),
    "FLAGS_pe_profile_fname": (str, ""),
    "FLAGS_tracer_profile_fname": (str, "xxgperf"),
    # distributed
    "FLAGS_rpc_deadline": (int, 180000),
    "FLAGS_rpc_retry_times": (int, 3),
    "FLAGS_rpc_server_profile_path": (str, "./profile_ps"),
    "FLAGS_rpc_send_thread_num": (int, 12),
    "FLAGS_rpc_get_thread_num": (int, 12),
    "FLAGS_rpc_prefetch_thread_num": (int, 12),
    "FLAGS_rpc_disable_reuse_port": (bool, False),
    "FLAGS_communicator_independent_recv_thread": (bool, True),
    "FLAGS_communicator_max_merge_var_num": (int, 20),
    "FLAGS_communicator_send_queue_size": (int, 20),
    "FLAGS_communicator_min_send_grad_num_before_recv": (int, 20),
    "FLAGS_communicator_thread_pool_size": (int, 5),
    "FLAGS_communicator_send_wait_times": (int, 5),
    "FLAGS_communicator_fake_rpc": (bool, False),
    "FLAGS_communicator_merge_sparse_grad": (bool, True),
    "FLAGS_communicator_is_sgd_optimizer": (bool, True),
    "FLAGS_enable_rpc_profiler": (bool, False),
    "FLAGS_dist_threadpool_size": (int, 0),
}

_values: dict[str, Any] = {}
_listeners: dict[str, list] = {}

# read on every Executor.run: a module attribute is the cheapest check there is
CHECK_NAN_INF = False
# FLAGS_cpu_deterministic, read per large matrix product (oar.cpu_threads.cpu_deterministic)
CPU_DETERMINISTIC = False
# fluid.profiler on (not a user flag; oar.profiler sets it): the Executor builds timed plans
PROFILE_OPS = False


def _convert(name: str, value: Any, where: str) -> Any:
    kind = _SPEC[name][0]
    if kind is bool:
        if isinstance(value, (bool, int)) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in ("1", "0", "true", "false"):
            return value.strip().lower() in ("1", "true")
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
    elif kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
    elif isinstance(value, str):
        return value
    raise TypeError(
        f"{where}: flag {name} takes a {kind.__name__}, given {type(value).__name__} {value!r}"
    )


def _check_name(name: Any, what: str) -> str:
    if not isinstance(name, str) or name not in _SPEC:
        raise ValueError(
            f"Flag {name} cannot {what} its value through this function: it is not a Fluid 1.8 "
            f"flag oar knows (see docs/flags.md for the list)"
        )
    return name


def set_flags(flags: Mapping) -> None:
    """``fluid.set_flags({"FLAGS_check_nan_inf": True, ...})``: change global flags at run time."""
    if not isinstance(flags, Mapping):
        raise TypeError(f"set_flags: flags should be a dict, given {type(flags).__name__}")
    converted = {
        _check_name(k, "set"): _convert(k, v, "set_flags") for k, v in flags.items()
    }  # all checked before any is applied
    for name, value in converted.items():
        _apply(name, value)


def get_flags(flags: str | Iterable[str]) -> dict:
    """``fluid.get_flags(["FLAGS_check_nan_inf"])`` -> ``{"FLAGS_check_nan_inf": False}``."""
    if isinstance(flags, str):
        flags = [flags]
    elif not isinstance(flags, (list, tuple)):
        raise TypeError(
            f"get_flags: flags should be a list, tuple or string, given {type(flags).__name__}"
        )
    return {_check_name(n, "get"): _values[n] for n in flags}


def flag(name: str) -> Any:
    """The current value of one flag (for oar's own modules)."""
    return _values[_check_name(name, "get")]


def on_change(name: str, callback: Callable[[Any], None]) -> None:
    """Call ``callback(value)`` whenever ``name`` is set (now too, with its current value)."""
    _listeners.setdefault(_check_name(name, "watch"), []).append(callback)
    callback(_values[name])


def _apply(name: str, value: Any) -> None:
    global CHECK_NAN_INF, CPU_DETERMINISTIC
    _values[name] = value
    if name == "FLAGS_check_nan_inf":
        CHECK_NAN_INF = value
    elif name == "FLAGS_cpu_deterministic":
        CPU_DETERMINISTIC = value
    for callback in _listeners.get(name, ()):
        callback(value)


def _set_threads(n: int) -> None:
    """FLAGS_paddle_num_threads: the CPU math (BLAS) thread count (oar.cpu_threads)."""
    if n <= 0:
        return
    from oar.cpu_threads import set_cpu_math_library_num_threads

    set_cpu_math_library_num_threads(n)


def _from_env() -> None:
    for name, (_, default) in _SPEC.items():
        _values[name] = default
    for name in _SPEC:
        raw = os.environ.get(name)
        if raw is not None:
            try:
                _values[name] = _convert(name, raw, "environment")
            except TypeError as exc:
                raise ValueError(f"{exc} (from the environment variable {name})") from None
    _apply("FLAGS_check_nan_inf", _values["FLAGS_check_nan_inf"])
    _apply("FLAGS_cpu_deterministic", _values["FLAGS_cpu_deterministic"])


_from_env()
if "FLAGS_paddle_num_threads" in os.environ:  # Fluid applies it at start-up
    _set_threads(_values["FLAGS_paddle_num_threads"])
_listeners["FLAGS_paddle_num_threads"] = [_set_threads]

__all__ = ["set_flags", "get_flags", "flag", "on_change"]
