"""The Executor: runs a program on a place, feeding and fetching by name."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

import oar.flags as _flags
from oar.errors import FeedError, FetchError, describe_var
from oar.executor.plan import Plan
from oar.executor.plan_cache import PlanCache
from oar.framework.callsite import user_callsite
from oar.framework.program import Program, default_main_program
from oar.lod_tensor import LoDTensor
from oar.places import CPUPlace, Place, resolve_device
from oar.scope import Scope, global_scope


class Executor:
    """Runs programs on ``place``; compiled plans are cached per (program, feeds, fetches).

    The plan is rebuilt only when the program changes (or ``FLAGS_check_nan_inf``
    is switched), so ``use_program_cache`` is accepted for compatibility and
    always on. The cache is bounded: at most ``plan_cache_size`` plans (default
    256, or ``OAR_PLAN_CACHE_SIZE``), least recently used evicted first, and a
    Program that is dropped takes its plans with it (see ``plan_cache``).
    """

    def __init__(self, place: Place | None = None, *, plan_cache_size: int | None = None) -> None:
        self.place = place if place is not None else CPUPlace()
        self._device = None
        # (program id, feed names, fetch names) -> (program ref, plan)
        self._plans = PlanCache(plan_cache_size)
        # (program id, feed keys, fetch names) -> (program ref, plan, feed specs)
        self._fast = PlanCache(self._plans.maxsize)
        self._closed = False
        # a dropped executor leaves nothing behind on the programs it ran
        weakref.finalize(self, _clear_caches, self._plans, self._fast)

    @property
    def device(self):
        if self._device is None:
            self._device = resolve_device(self.place)
        return self._device

    def plans(self) -> list:
        """The compiled plans this executor holds, oldest first (to inspect, e.g.
        ``plan.free_after``: which temporaries each op releases; see docs/memory.md)."""
        return [plan for _ref, plan in self._plans.values()]

    def close(self) -> None:
        self._plans.clear()
        self._fast.clear()
        if not self._closed:
            from oar.plugins import _manager

            _manager().hook.oar_executor_closed(executor=self)
        self._closed = True

    def run(
        self,
        program: Program | Any = None,
        feed: Mapping | Sequence | None = None,
        fetch_list: Sequence | Any = None,
        feed_var_name: str = "feed",
        fetch_var_name: str = "fetch",
        scope: Scope | None = None,
        return_numpy: bool = True,
        use_program_cache: bool = False,
        return_merged: bool = True,
        use_prune: bool = False,
    ) -> list:
        """Run ``program`` once; returns the fetched values (numpy arrays by default)."""
        if self._closed:
            raise RuntimeError("Executor.run: this executor was closed")
        if program is None:
            program = default_main_program()
        compiled = getattr(program, "_oar_compiled", None)
        if compiled is not None:
            return compiled._run(self, feed, fetch_list, scope, return_numpy, return_merged)
        if not isinstance(program, Program):
            raise TypeError(
                f"Executor.run: program must be a Program or CompiledProgram, given {type(program).__name__}"
            )
        scope = scope if scope is not None else global_scope()
        feed = {} if feed is None else feed
        if isinstance(feed, (list, tuple)):
            if len(feed) != 1:
                raise FeedError(
                    f"Executor.run: a list of {len(feed)} feed dicts needs a CompiledProgram with data "
                    f"parallelism (fluid.CompiledProgram(program).with_data_parallel(...))"
                )
            feed = feed[0]
        if type(feed) is not dict and not isinstance(feed, Mapping):  # the ABC check is slow
            raise TypeError(
                f"Executor.run: feed must be a dict of name -> array, given {type(feed).__name__}"
            )
        fast_key = None if program._readers else _fast_key(program, feed, fetch_list)
        hit = self._fast.get(fast_key, program) if fast_key is not None else None
        if (
            hit is not None
            and hit[1].version == program._version
            and hit[1].checks_nan_inf is _flags.CHECK_NAN_INF
            and hit[1].profiled is _flags.PROFILE_OPS
        ):
            # the same program, feed names and fetch list as a previous run: names were
            # validated then; only the fed values need converting and checking
            try:
                arrays, lods = _convert_known_feeds(feed, hit[2], self)
            except FeedError as exc:
                raise exc.with_context(callsite=user_callsite(), created=True) from None
            return hit[1].run(arrays, lods, scope, return_numpy)
        try:
            fetch_names = _fetch_names(fetch_list, program)
            arrays, lods = _convert_feeds(feed, program.global_block(), self)
        except (FeedError, FetchError) as exc:
            raise exc.with_context(callsite=user_callsite(), created=True) from None
        # non-iterable readers add their batch before the plan is chosen, so the
        # variables they feed count as feeds (not as scope inputs) in the plan
        if program._readers:
            fed = set(arrays)
            for reader in program._readers:
                reader._before_run(arrays, lods)
            if self.device.name != "cpu":  # reader batches are host arrays, like user feeds
                for name in set(arrays) - fed:
                    arrays[name] = self.device.from_host(arrays[name], self.place.device_id)
        plan = self._plan(program, tuple(sorted(arrays)), fetch_names)
        if fast_key is not None:
            block = program.global_block()
            names = (k if isinstance(k, str) else getattr(k, "name", k) for k in fast_key[1])
            specs = tuple((k, n, block._find_var_recursive(n)) for k, n in zip(fast_key[1], names))
            self._fast.put(fast_key, program, (weakref.ref(program), plan, specs))
        return plan.run(arrays, lods, scope, return_numpy)

    def _plan(self, program: Program, feed_names: tuple, fetch_names: tuple) -> Plan:
        key = (id(program), feed_names, fetch_names)
        check = _flags.CHECK_NAN_INF
        hit = self._plans.get(key, program)
        if hit is not None:
            plan = hit[1]
            if (
                plan.version == program._version
                and plan.checks_nan_inf is check
                and plan.profiled is _flags.PROFILE_OPS
            ):
                return plan
        if _flags.PROFILE_OPS:  # fluid.profiler is on: every op timed
            from oar.executor.profiled_plan import plan_class

            plan = plan_class(check)(program, feed_names, fetch_names, self.device)
        elif check:
            from oar.executor.checked_plan import CheckedPlan

            plan = CheckedPlan(program, feed_names, fetch_names, self.device)
        else:
            plan = Plan(program, feed_names, fetch_names, self.device)
        plan.device_id = getattr(self.place, "device_id", 0)
        self._plans.put(key, program, (weakref.ref(program), plan))
        return plan

    # the industrial data path (fluid.DatasetFactory datasets, oar-data)
    def train_from_dataset(
        self,
        program: Program | None = None,
        dataset: Any = None,
        scope: Scope | None = None,
        thread: int = 0,
        debug: bool = False,
        fetch_list: Sequence | None = None,
        fetch_info: Sequence | None = None,
        print_period: int = 100,
        fetch_handler: Any = None,
    ) -> None:
        """Run ``program`` over every batch of ``dataset`` in ``thread`` threads (Hogwild on CPU).

        ``thread=0`` takes the dataset's ``set_thread``; every ``print_period`` batches the
        ``fetch_list`` values are printed, labelled by ``fetch_info``.
        """
        return self._run_dataset(
            "train_from_dataset", program, dataset, scope, thread, debug, fetch_list,
            fetch_info, print_period, fetch_handler,
        )  # fmt: skip

    def infer_from_dataset(
        self,
        program: Program | None = None,
        dataset: Any = None,
        scope: Scope | None = None,
        thread: int = 0,
        debug: bool = False,
        fetch_list: Sequence | None = None,
        fetch_info: Sequence | None = None,
        print_period: int = 100,
        fetch_handler: Any = None,
    ) -> None:
        """Like :meth:`train_from_dataset`, for a program without optimizer ops."""
        return self._run_dataset(
            "infer_from_dataset", program, dataset, scope, thread, debug, fetch_list,
            fetch_info, print_period, fetch_handler,
        )  # fmt: skip

    def _run_dataset(self, what: str, program: Any, dataset: Any, *args: Any) -> None:
        run = getattr(dataset, "_run_with", None)
        if run is None:
            raise TypeError(
                f"Executor.{what}: dataset must come from fluid.DatasetFactory().create_dataset(...), "
                f"given {type(dataset).__name__}"
            )
        if program is None:
            program = default_main_program()
        elif getattr(program, "_oar_compiled", None) is not None:
            # a CompiledProgram: the threads run the program itself, as Fluid does; a
            # pipelined Program (PipelineOptimizer) runs as is, its runner taking each batch
            program = getattr(program, "_program", program)
        return run(self, program, *args)


def _clear_caches(*caches: PlanCache) -> None:
    for cache in caches:
        cache.clear()


def _fetch_names(fetch_list: Any, program: Program) -> tuple:
    if fetch_list is None:
        return ()
    if (
        isinstance(fetch_list, (str,))
        or hasattr(fetch_list, "name")
        and not isinstance(fetch_list, (list, tuple, set))
    ):
        fetch_list = [fetch_list]
    names = []
    block = program.global_block()
    for f in fetch_list:
        name = f if isinstance(f, str) else getattr(f, "name", None)
        if not isinstance(name, str):
            raise FetchError(
                f"Executor.run: fetch_list items must be Variables or names, given {type(f).__name__}"
            )
        if block._find_var_recursive(name) is None:
            known = sorted(n for n in block.vars if "@" not in n)[:20]
            raise FetchError(
                f"Executor.run: cannot fetch '{name}': the program has no such variable "
                f"(some it has: {known})"
            )
        names.append(name)
    return tuple(names)


def _convert_feeds(feed: Mapping, block: Any, exe: Executor) -> tuple:
    arrays: dict = {}
    lods: dict = {}
    for name, value in feed.items():
        if not isinstance(name, str):
            name = getattr(name, "name", name)
        var = block._find_var_recursive(name)
        if var is None:
            data_vars = sorted(n for n, v in block.vars.items() if v.is_data)
            raise FeedError(
                f"Executor.run: feed names '{name}', which the program does not have; "
                f"its data variables are {data_vars}"
            )
        arrays[name] = _convert_one(name, value, var, exe, lods)
    return arrays, lods


def _convert_known_feeds(feed: Mapping, specs: tuple, exe: Executor) -> tuple:
    """Like :func:`_convert_feeds` for feed keys already resolved to (key, name, var)."""
    arrays: dict = {}
    lods: dict = {}
    on_host = exe.device.name == "cpu"
    for key, name, var in specs:
        value = feed[key]
        if value.__class__ is np.ndarray and on_host and _fits(value, var.dtype, var.shape):
            arrays[name] = value  # the common case, checked inline: a plain array as declared
        else:
            arrays[name] = _convert_one(name, value, var, exe, lods)
    return arrays, lods


def _fits(arr: np.ndarray, dtype: Any, shape: Any) -> bool:
    """Whether ``arr`` has the declared ``dtype`` and ``shape`` (-1: any size) exactly; when
    not, :func:`_convert_one` converts it or says why it cannot."""
    if dtype is not None and arr.dtype != _np_dtype(dtype):
        return False
    given = arr.shape
    if shape is None or shape == given:
        return True
    if len(shape) != len(given):
        return False
    for d, g in zip(shape, given):
        if d != g and d >= 0:
            return False
    return True


def _convert_one(name: str, value: Any, var: Any, exe: Executor, lods: dict) -> Any:
    if isinstance(value, LoDTensor):
        if value._array is None:
            raise FeedError(f"Executor.run: the LoDTensor fed to '{name}' holds no data")
        if value._lod:
            if not value.has_valid_recursive_sequence_lengths():
                raise FeedError(_bad_lod(name, value))
            lods[name] = value._lod
        value = value._array
    arr = _check_feed_shape(name, _as_array(name, value, var), var)
    device = exe.device
    return device.from_host(arr, exe.place.device_id) if device.name != "cpu" else arr


def _bad_lod(name: str, value: LoDTensor) -> str:
    rows = value._array.shape[0] if value._array.ndim else 1
    return (
        f"Executor.run: the LoD of the LoDTensor fed to '{name}' does not match its rows: "
        f"sequence lengths {value.recursive_sequence_lengths()} must sum to the {rows} rows "
        f"of its data (each level to the number of sequences of the next)"
    )


def _fast_key(program: Program, feed: Mapping, fetch_list: Any) -> tuple | None:
    """A hashable key for (program, feed keys, fetch names), or None if there is none.

    Unvalidated: a key is stored only after a run validated its names.
    """
    try:
        feed_keys = tuple(feed)
        if fetch_list is None:
            fetch = ()
        elif type(fetch_list) is list or type(fetch_list) is tuple:
            if len(fetch_list) == 1:  # the usual [loss]: no generator to run
                f = fetch_list[0]
                fetch = (f if type(f) is str else f.name,)
            else:
                fetch = tuple(f if type(f) is str else f.name for f in fetch_list)
        else:
            fetch = (fetch_list if type(fetch_list) is str else fetch_list.name,)
        key = (id(program), feed_keys, fetch)
        hash(key)
        return key
    except (AttributeError, TypeError):
        return None


def _as_array(name: str, value: Any, var: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        # a subclass (a fetched UserArray fed back, np.matrix, ...) runs as the plain array
        arr = value if value.__class__ is np.ndarray else value.view(np.ndarray)
    elif hasattr(value, "__array__") and not isinstance(value, (list, tuple)):
        arr = np.asarray(value)
    else:
        try:
            arr = np.asarray(value, dtype=var.dtype)
        except (TypeError, ValueError) as exc:
            raise FeedError(
                f"Executor.run: cannot turn the value fed to '{name}' into a {var.dtype} array: {exc}"
            ) from None
    if var.dtype is not None and arr.dtype != _np_dtype(var.dtype) and arr.dtype.name != var.dtype:
        raise FeedError(
            f"Executor.run: feed '{name}' expects dtype {var.dtype} (declared by its data layer), "
            f"given an array of dtype {arr.dtype.name}; convert it with .astype('{var.dtype}')"
        )
    return arr


@functools.cache
def _np_dtype(name: str) -> Any:
    """``np.dtype(name)``, cached: comparing dtype objects is much cheaper than ``dtype.name``."""
    try:
        return np.dtype(name)
    except TypeError:
        return None


def _check_feed_shape(name: str, arr: np.ndarray, var: Any) -> np.ndarray:
    shape = var.shape
    if shape is None:
        return arr
    given = arr.shape
    if len(shape) == len(given):
        for d, g in zip(shape, given):
            if d >= 0 and d != g:
                break
        else:
            return arr
    declared = list(shape)
    given = list(given)
    if len(declared) != len(given) and not var.need_check_feed and declared and given:
        # fluid.layers.data accepts trailing dims that flatten to the declared ones
        # (the seed feeds (1, 4, 1) to a [-1, 4] input); reshape to the declared rank.
        lead_ok = declared[0] < 0 or declared[0] == given[0]
        rest_d = (
            int(np.prod([d for d in declared[1:]])) if all(d >= 0 for d in declared[1:]) else None
        )
        rest_g = int(np.prod(given[1:]))
        if lead_ok and rest_d is not None and rest_d == rest_g:
            return arr.reshape([given[0]] + declared[1:])
    raise FeedError(
        f"Executor.run: feed '{name}' has shape {given}, but its data layer "
        f"{describe_var(name, var)} expects {declared} (-1 = any size)"
    )
