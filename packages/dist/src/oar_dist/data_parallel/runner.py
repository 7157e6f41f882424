"""The multi-place runner behind ``CompiledProgram.with_data_parallel`` and ``ParallelExecutor``.

Each place is a thread running its own plan of the data-parallel program (the
user's program plus the gradient all-reduce of :mod:`.grad_allreduce`) on its
share of the batch, in its own scope: place 0 uses the run's scope, the other
places child scopes holding private copies of the persistables the program
writes (parameters, optimizer accumulators), so the in-place optimizer updates
of one place never touch another's arrays. Every place applies the same
update to the same all-reduced gradients, so all places end each step with
identical parameters. numpy releases the GIL in its BLAS calls, so the places
compute in parallel on a multi-core CPU.

With ``num_trainers > 1`` (a transpiled ``nccl2`` job under ``mpiexec``) the
communicator of ring 0 spans every place of every trainer: local threads
first, then the processes (:class:`~oar_dist.collective.hierarchical.HierarchicalBackend`).
"""

from __future__ import annotations

import copy
import os
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from oar.api import LoDTensor, Scope, global_scope, limit_cpu_math_threads
from oar.errors import FeedError

from oar_dist.collective import CollectiveError, ThreadGroup, get_ring, thread_rings
from oar_dist.collective.base import DEFAULT_BUCKET_BYTES
from oar_dist.collective.hierarchical import HierarchicalBackend
from oar_dist.collective.nccl import current_gpu, make_nccl_group
from oar_dist.data_parallel.feeds import device_feeds, merge_fetches
from oar_dist.data_parallel.grad_allreduce import CUSTOMIZED, insert_grad_allreduce

WHERE = "CompiledProgram.with_data_parallel"
_COLLECTIVE_OPS = ("c_allreduce_sum", "c_fused_allreduce_sum", "c_broadcast")


def fuse_bucket_bytes() -> int:
    """Bucket size for fused gradient all-reduce: Fluid's ``FLAGS_fuse_parameter_memory_size`` (MB)."""
    raw = os.environ.get("FLAGS_fuse_parameter_memory_size", "")
    try:
        mb = float(raw) if raw else -1.0
    except ValueError:
        raise ValueError(
            f"FLAGS_fuse_parameter_memory_size must be a number of MB, given {raw!r}"
        ) from None
    return int(mb * (1 << 20)) if mb > 0 else DEFAULT_BUCKET_BYTES


class DataParallelRunner:
    """Runs one CompiledProgram on ``num_places`` places (threads) per trainer."""

    def __init__(self, compiled: Any, num_places: int) -> None:
        # weak: the CompiledProgram holds its runner, and dropping the program must stop the threads
        self._compiled_ref = weakref.ref(compiled)
        self.n = int(num_places)
        self.has_run = False
        self._key: tuple | None = None
        self._program = None
        self._private: tuple = ()
        self._exes: list = []
        self._group: ThreadGroup | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._root: Scope | None = None
        self._scopes: list = []
        self._synced: dict = {}

    @property
    def compiled(self) -> Any:
        compiled = self._compiled_ref()
        if compiled is None:
            raise RuntimeError(f"{WHERE}: the CompiledProgram of this runner no longer exists")
        return compiled

    # --- preparing ---------------------------------------------------------------------------
    def _trainers(self) -> tuple:
        bs = self.compiled._build_strategy
        return int(bs.num_trainers or 1), int(bs.trainer_id or 0)

    def _prepare(self, exe: Any) -> None:
        program = self.compiled._program
        trainers, _ = self._trainers()
        key = (id(program), program._version, trainers, self.n)
        if key == self._key:
            return
        bs = self.compiled._build_strategy
        block = program.global_block()
        if any(op.type in _COLLECTIVE_OPS for op in block.ops):
            raise ValueError(
                f"{WHERE}: the program already carries collective ops (it was transpiled with "
                f"mode='collective'); run it with a plain Executor, one place per process"
            )
        if bs.sync_batch_norm and self.n * trainers > 1:
            if any(op.type == "batch_norm" for op in block.ops):
                raise NotImplementedError(
                    f"{WHERE}: BuildStrategy.sync_batch_norm=True is not supported by oar-dist yet "
                    f"(batch statistics would have to be all-reduced); set it to False"
                )
        dp = program.clone()
        insert_grad_allreduce(
            dp,
            self.compiled._loss_name,
            self.n * trainers,
            int(bs.gradient_scale_strategy),
            fuse=bool(bs.fuse_all_reduce_ops),
            bucket_bytes=fuse_bucket_bytes(),
        )
        dblock = dp.global_block()
        written = {n for op in dblock.ops for n in op.output_arg_names}
        self._private = tuple(
            sorted(n for n, v in dblock.vars.items() if v.persistable and n in written)
        )
        from oar.api import Executor

        self._program = dp
        self._exes = [Executor(p) for p in self._places(exe)]
        self._key = key
        self._synced = {}

    def _places(self, exe: Any) -> list:
        """One place per device thread: the ``places`` given, else every GPU for a GPU executor,
        else the executor's own place (CPU places are all alike)."""
        given = self.compiled._places
        if given and len(given) == self.n:
            return list(given)
        if exe.place.is_gpu_place():
            from oar.api import cuda_places

            gpus = cuda_places()
            if len(gpus) >= self.n:
                return gpus[: self.n]
        return [exe.place] * self.n

    def _gpu_ids(self) -> list | None:
        """The GPU of each place when the places really run on GPUs (not the CPU fallback)."""
        if not self._exes or self._exes[0].device.name != "cuda":
            return None
        return [e.place.device_id for e in self._exes]

    def _outer_ring(self) -> Any:
        trainers, trainer_id = self._trainers()
        if trainers <= 1:
            return None
        outer = get_ring(0, WHERE)
        if outer.size != trainers or outer.rank != trainer_id:
            raise CollectiveError(
                f"{WHERE}: num_trainers={trainers}, trainer_id={trainer_id}, but ring 0 is rank "
                f"{outer.rank} of {outer.size} ({outer.name}); start one process per trainer "
                f"(mpiexec -n {trainers}) and give each its rank as trainer_id"
            )
        return outer

    def _rings(self, outer: Any) -> list:
        gpus = self._gpu_ids()
        if gpus is not None:
            # GPU places reduce device arrays with NCCL: one communicator over every place of
            # every trainer (bootstrapped through ring 0), as Fluid's nccl2 mode does
            if self._group is None or self._group.broken:
                self._group = make_nccl_group(gpus, outer)
            return self._group.members
        if self.n == 1:
            return [outer]
        if self._group is None or self._group.broken:
            self._group = ThreadGroup(self.n)
        members = self._group.members
        if outer is None:
            return members
        return [HierarchicalBackend(m, outer) for m in members]

    # --- scopes ------------------------------------------------------------------------------
    def _device_scopes(self, scope: Scope) -> list:
        if self._root is not scope or len(self._scopes) != self.n:
            self._root = scope
            self._scopes = [scope] + [Scope(scope) for _ in range(self.n - 1)]
            self._synced = {}
        return self._scopes

    def _sync(self, scopes: list) -> None:
        """Copy persistables that changed in place 0's scope since our last run to the other places."""
        root = scopes[0]
        for name in self._private:
            sv = root.find_var(name)
            if sv is None or not sv.is_initialized():
                continue
            value = sv.value
            arr = value._array if isinstance(value, LoDTensor) else value
            if self._synced.get(name) is arr:
                continue
            for s in scopes[1:]:
                if isinstance(value, LoDTensor):
                    s.var(name).value = LoDTensor(np.array(arr, copy=True), value._lod)
                else:
                    s.var(name).value = copy.deepcopy(value)
            self._synced[name] = arr

    def _record(self, root: Scope) -> None:
        for name in self._private:
            sv = root.find_var(name)
            if sv is not None and sv.value is not None:
                v = sv.value
                self._synced[name] = v._array if isinstance(v, LoDTensor) else v

    # --- running -----------------------------------------------------------------------------
    def run(
        self,
        exe: Any,
        feed: Any,
        fetch_list: Any,
        scope: Any,
        return_numpy: bool,
        return_merged: bool,
    ) -> list:
        compiled = self.compiled
        es = compiled._exec_strategy
        if es is not None and int(getattr(es, "num_iteration_per_run", 1)) != 1:
            raise NotImplementedError(
                f"{WHERE}: ExecutionStrategy.num_iteration_per_run="
                f"{es.num_iteration_per_run} is not supported; call exe.run once per iteration"
            )
        self._prepare(exe)
        scope = scope if scope is not None else global_scope()
        source = compiled._share_vars_from
        if source is not None:
            other = getattr(source, "_runner", None)
            if other is None or not other.has_run:
                raise ValueError(
                    f"{WHERE}(share_vars_from=...): the CompiledProgram to share variables from has "
                    f"not run on {self.n} places yet; run the training program first"
                )
            scopes = other._device_scopes(scope)
            other._sync(scopes)
        else:
            scopes = self._device_scopes(scope)
        self._sync(scopes)
        feeds = self._feeds(feed)
        fetch_names = _fetch_names(fetch_list)
        results = self._run_places(feeds, fetch_names, scopes)
        self._record(scopes[0])
        if source is not None:
            source._runner._record(scopes[0])
        self.has_run = True
        return merge_fetches(results, return_numpy, return_merged)

    def _feeds(self, feed: Any) -> list:
        program = self.compiled._program
        if program._readers:
            arrays: dict = {}
            lods: dict = {}
            program._reader_batches_per_run = self.n
            try:
                for reader in program._readers:
                    reader._before_run(arrays, lods)
            finally:
                program._reader_batches_per_run = 1
            merged = dict(feed or {}) if not isinstance(feed, (list, tuple)) else {}
            for name, arr in arrays.items():
                merged[name] = LoDTensor(arr, lods[name]) if lods.get(name) else arr
            feeds = device_feeds(merged, self.n, WHERE)
        else:
            feeds = device_feeds(feed, self.n, WHERE)
        bs = self.compiled._build_strategy
        loss = self.compiled._loss_name
        if loss and int(bs.gradient_scale_strategy) == CUSTOMIZED:
            grad = loss + "@GRAD"
            for i, f in enumerate(feeds):
                names = {k if isinstance(k, str) else getattr(k, "name", k) for k in f}
                if grad not in names:
                    raise FeedError(
                        f"{WHERE}: gradient_scale_strategy is Customized, so each place must be fed "
                        f"'{grad}' (the loss gradient); feed {i} does not have it"
                    )
        return feeds

    def _run_places(self, feeds: list, fetch_names: list, scopes: list) -> list:
        outer = self._outer_ring()
        rings = self._rings(outer)
        group = self._group if self.n > 1 or self._gpu_ids() else None
        program = self._program

        gpus = self._gpu_ids()

        def work(k: int) -> list:
            try:
                with thread_rings({0: rings[k]}), current_gpu(gpus[k] if gpus else None):
                    return self._exes[k].run(
                        program,
                        feed=feeds[k],
                        fetch_list=fetch_names,
                        scope=scopes[k],
                        return_numpy=False,
                    )
            except BaseException:
                if group is not None:
                    group.abort()  # wake the places waiting for this one in a collective
                raise

        if self.n == 1:
            return [work(0)]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.n - 1, thread_name_prefix="oar-place")
            weakref.finalize(self, self._pool.shutdown, wait=False)
        results: list = [None] * self.n
        errors: list = []
        # one thread per place: CPU math (BLAS, compiled kernels) gets cores // places threads
        # per place while they run, so places x threads never exceed the cores
        with limit_cpu_math_threads(max(1, (os.cpu_count() or 1) // self.n)):
            futures = [self._pool.submit(work, k) for k in range(1, self.n)]
            try:
                results[0] = work(0)
            except Exception as exc:
                errors.append((0, exc))
            for k, fut in enumerate(futures, 1):
                try:
                    results[k] = fut.result()
                except Exception as exc:
                    errors.append((k, exc))
        if errors:
            self._group = None
            # the root cause, not the places that gave up waiting for the failed one
            place, exc = next(((k, e) for k, e in errors if not _from_collective(e)), errors[0])
            if hasattr(exc, "add_note"):
                exc.add_note(f"(on place {place} of {self.n} in {WHERE})")
            raise exc
        return results


def _from_collective(exc: BaseException) -> bool:
    while exc is not None:
        if isinstance(exc, CollectiveError):
            return True
        exc = exc.__cause__
    return False


def _fetch_names(fetch_list: Any) -> list:
    if fetch_list is None:
        return []
    if isinstance(fetch_list, str) or not isinstance(fetch_list, (list, tuple)):
        fetch_list = [fetch_list]
    return [f if isinstance(f, str) else getattr(f, "name", f) for f in fetch_list]
