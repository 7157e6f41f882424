"""Running a pipelined program: one thread per stage, queues between stages, micro-batches.

A batch is split into ``num_microbatches`` equal micro-batches along dimension 0, each
with its own child scope of the run's scope (parameters are read from the parent). Stage
``s``'s thread takes ``(phase, micro-batch)`` items from its queue: after its forward
section it hands the micro-batch to stage ``s + 1`` (the last stage starts the backward
pass at once), after its backward section to stage ``s - 1``. When every micro-batch is
back through stage 0, the gradients are averaged over the micro-batches and the update
section runs once, in the run's scope: with a mean loss the update equals the one-stage
update of the whole batch.
"""

from __future__ import annotations

import queue
import threading
from typing import Any

import numpy as np

from oar.errors import ArgumentError, FeedError
from oar.lod_tensor import LoDTensor
from oar.scope import Scope, global_scope

_STOP = object()


def _array(value: Any, name: str, micro: int) -> np.ndarray:
    if isinstance(value, LoDTensor):
        if value.lod() and micro > 1:
            raise FeedError(
                f"PipelineOptimizer: feed '{name}' has a LoD; micro-batches split dense "
                f"batches only (num_microbatches={micro})"
            )
        value = np.asarray(value)
    return np.asarray(value)


def split_feed(feed: Any, micro: int) -> list:
    """``micro`` feed dicts: each array cut into equal parts along dimension 0."""
    if isinstance(feed, (list, tuple)):
        if len(feed) != 1:
            raise FeedError("PipelineOptimizer: the program takes one feed dict per run")
        feed = feed[0]
    parts: list = [{} for _ in range(micro)]
    for name, value in (feed or {}).items():
        arr = _array(value, name, micro)
        if micro > 1 and (arr.ndim == 0 or arr.shape[0] % micro):
            raise FeedError(
                f"PipelineOptimizer: feed '{name}' of shape {list(arr.shape)} cannot be split "
                f"into {micro} equal micro-batches along dimension 0"
            )
        for part, piece in zip(parts, np.split(arr, micro) if micro > 1 else [arr]):
            part[name] = piece
    return parts


def _merge(values: list) -> np.ndarray:
    """Micro-batch results as one batch's: scalars averaged, batches concatenated."""
    first = np.asarray(values[0])
    if first.ndim == 0 or first.shape == (1,):
        return np.mean(np.stack([np.asarray(v) for v in values]), axis=0).astype(first.dtype)
    return np.concatenate([np.asarray(v) for v in values], axis=0)


class PipelineRunner:
    """The program's runner (``program._oar_compiled``): ``Executor.run`` hands the run here."""

    def __init__(self, program: Any, cut_names: list | None, num_microbatches: int) -> None:
        self._program = program
        self._cut_names = cut_names
        self._micro = num_microbatches
        self._sections: Any = None
        self._version = None
        self.last_stage_threads: list = []  # thread names of the last run (for tests)

    def sections(self) -> Any:
        from oar.optimizer._pipeline_sections import split_program

        if self._sections is None or self._version != self._program._version:
            self._sections = split_program(self._program, self._cut_names)
            self._version = self._program._version
        return self._sections

    # Executor.run's hand-off (the CompiledProgram seam)
    def _run(self, exe, feed, fetch_list, scope, return_numpy=True, return_merged=True) -> list:
        secs = self.sections()
        scope = scope if scope is not None else global_scope()
        feeds = split_feed(feed, self._micro)
        kids = [Scope(scope) for _ in range(self._micro)]
        self._pipeline(exe, secs, feeds, kids)
        self._reduce(secs, kids, scope)
        if secs.update is not None:
            exe.run(secs.update, feed={}, fetch_list=[], scope=scope)
        return self._fetch(fetch_list, kids, scope, return_numpy)

    def _pipeline(self, exe: Any, secs: Any, feeds: list, kids: list) -> None:
        from oar.executor import Executor

        n = secs.num_stages
        inbox = [queue.Queue() for _ in range(n)]
        done: queue.Queue = queue.Queue()
        place = getattr(exe, "place", None)

        def run(stage_exe, sec, m):
            if sec is None:
                return
            wanted = secs.reads[id(sec)]
            fed = {k: v for k, v in feeds[m].items() if k in wanted}
            stage_exe.run(sec, feed=fed, fetch_list=[], scope=kids[m])

        def worker(s: int) -> None:
            stage_exe = Executor(place)
            while True:
                item = inbox[s].get()
                if item is _STOP:
                    return
                phase, m = item
                try:
                    if phase == "fwd":
                        run(stage_exe, secs.forward[s], m)
                        if s + 1 < n:
                            inbox[s + 1].put(("fwd", m))
                            continue
                    run(stage_exe, secs.backward[s], m)
                    (inbox[s - 1].put(("bwd", m)) if s > 0 else done.put((m, None)))
                except BaseException as exc:  # handed to the caller's thread
                    done.put((m, exc))

        threads = [
            threading.Thread(target=worker, args=(s,), name=f"oar-pipeline-stage-{s}", daemon=True)
            for s in range(n)
        ]
        self.last_stage_threads = [t.name for t in threads]
        for t in threads:
            t.start()
        try:
            for m in range(len(feeds)):
                inbox[0].put(("fwd", m))
            for _ in range(len(feeds)):
                _, exc = done.get()
                if exc is not None:
                    raise exc
        finally:
            for q in inbox:
                q.put(_STOP)
            for t in threads:
                t.join()

    @staticmethod
    def _reduce(secs: Any, kids: list, scope: Any) -> None:
        """Average the gradients over the micro-batches; keep the last micro-batch's state."""
        for name in secs.grads:
            vals = [k._vars.get(name) for k in kids]
            if any(v is None or v.value is None for v in vals):
                continue
            arrays = [np.asarray(v.value) for v in vals]
            mean = arrays[0] if len(arrays) == 1 else np.mean(np.stack(arrays), axis=0)
            scope.var(name).value = LoDTensor(mean.astype(arrays[0].dtype, copy=False))
        for name in secs.stateful:
            v = kids[-1]._vars.get(name)
            if v is not None and v.value is not None:
                scope.var(name).value = v.value

    def _fetch(self, fetch_list: Any, kids: list, scope: Any, return_numpy: bool) -> list:
        if fetch_list is None:
            return []
        if not isinstance(fetch_list, (list, tuple)):
            fetch_list = [fetch_list]
        block = self._program.global_block()
        out = []
        for f in fetch_list:
            name = f if isinstance(f, str) else getattr(f, "name", None)
            var = block.vars.get(name) if name is not None else None
            if var is None:
                raise ArgumentError(
                    "PipelineOptimizer", f"fetch_list names an unknown variable {f!r}"
                )
            values = [(k._vars[name].value if name in k._vars else None) for k in kids]
            if var.persistable or all(v is None for v in values):
                # parameters, and what the update section computes, live in the run's scope
                sv = scope.find_var(name)
                values = [None if sv is None else sv.value]
            if any(v is None for v in values):
                raise ArgumentError(
                    "PipelineOptimizer", f"fetched variable '{name}' was not computed by the run"
                )
            merged = _merge([np.asarray(v) for v in values])
            out.append(merged if return_numpy else LoDTensor(merged))
        return out
