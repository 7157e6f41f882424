"""Worker processes for the 1.8 ``DataLoader(dataset, num_workers=N)``: batches in order.

Each epoch starts ``N`` processes. The start method: ``fork`` on Python < 3.12
where the platform has it (what Fluid 1.8 does on Linux, so scripts without an
``if __name__ == "__main__"`` guard and datasets defined in ``__main__`` work
unchanged); ``forkserver`` (else ``spawn``) on 3.12+, where forking a threaded
process is deprecated. ``OAR_DATALOADER_START_METHOD`` overrides; ``fork`` warns
on 3.12+. The parent
sends ``(sequence number, sample indices)`` round-robin, keeps ``2 * N`` batches
in flight and yields results in sequence order. A worker collates its batch
and, with ``use_shared_memory``, returns every array through a
``multiprocessing.shared_memory`` segment that the parent copies out and
unlinks at once (no pickling of array data, nothing left behind).

A worker that dies (killed, crashed) is noticed within ``POLL_S``: the epoch
ends with :class:`WorkerError` naming the worker, its pid and exit code, and
the other workers are stopped. Errors raised in the dataset or collate
function come back with the worker's traceback. Every way out of an epoch
(end, ``break``, error, garbage collection) stops and joins the workers.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

POLL_S = 0.2
JOIN_S = 2.0
ENV_START_METHOD = "OAR_DATALOADER_START_METHOD"


class WorkerError(RuntimeError):
    """A DataLoader worker process died or failed."""


def start_method() -> str:
    method = os.environ.get(ENV_START_METHOD)
    available = multiprocessing.get_all_start_methods()
    if method is None:
        if sys.version_info < (3, 12) and "fork" in available:
            method = "fork"
        else:
            method = "forkserver" if "forkserver" in available else "spawn"
    if method == "fork" and sys.version_info >= (3, 12):
        warnings.warn(
            "DataLoader workers started with 'fork' in a process that runs threads may deadlock "
            "(deprecated since Python 3.12); prefer 'forkserver' or 'spawn'",
            DeprecationWarning,
            stacklevel=3,
        )
    return method


def _unpicklable(method: str, num_workers: int, exc: BaseException) -> str:
    return (
        f"DataLoader(num_workers={num_workers}): the workers start with '{method}', which "
        f"pickles the dataset, collate_fn and worker_init_fn to send them, and one of them "
        f"cannot be pickled ({type(exc).__name__}: {exc}). Define them at module level (not "
        f"inside a function; functools.partial of a module-level function works), or set "
        f"{ENV_START_METHOD}=fork where forking is safe"
    )


# --- in the worker -----------------------------------------------------------------------------------
def _to_shared(obj: Any, segments: list) -> Any:
    from multiprocessing import resource_tracker, shared_memory

    if isinstance(obj, np.ndarray) and obj.nbytes > 0 and obj.dtype != object:
        shm = shared_memory.SharedMemory(create=True, size=obj.nbytes)
        # the parent owns the segment from here on (it unlinks it after copying out)
        resource_tracker.unregister(shm._name, "shared_memory")  # type: ignore[attr-defined]
        np.ndarray(obj.shape, obj.dtype, buffer=shm.buf)[...] = obj
        segments.append(shm)
        return ("__oar_shm__", shm.name, obj.shape, obj.dtype.str)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_shared(x, segments) for x in obj)
    if isinstance(obj, dict):
        return {k: _to_shared(v, segments) for k, v in obj.items()}
    return obj


def _worker_loop(
    dataset: Any,
    collate_fn: Callable,
    index_queue: Any,
    result_queue: Any,
    worker_id: int,
    num_workers: int,
    init_fn: Callable | None,
    use_shared_memory: bool,
) -> None:
    from oar_data import map_loader

    map_loader._worker_info = (worker_id, num_workers, dataset)
    try:
        if init_fn is not None:
            init_fn(worker_id)
    except Exception:
        result_queue.put((-1, worker_id, "error", traceback.format_exc()))
        return
    while True:
        job = index_queue.get()
        if job is None:
            return
        seq, indices = job
        try:
            batch = collate_fn([dataset[i] for i in indices])
            if use_shared_memory:
                segments: list = []
                payload = _to_shared(batch, segments)
                result_queue.put((seq, worker_id, "shm", payload))
                for shm in segments:  # the parent unlinks them after copying
                    shm.close()
            else:
                result_queue.put((seq, worker_id, "data", batch))
        except Exception:
            result_queue.put((seq, worker_id, "error", traceback.format_exc()))


# --- in the parent -----------------------------------------------------------------------------------
def _from_shared(obj: Any) -> Any:
    from multiprocessing import shared_memory

    if isinstance(obj, tuple) and len(obj) == 4 and obj[0] == "__oar_shm__":
        shm = shared_memory.SharedMemory(name=obj[1])
        try:
            return np.ndarray(obj[2], np.dtype(obj[3]), buffer=shm.buf).copy()
        finally:
            shm.close()
            shm.unlink()
    if isinstance(obj, (list, tuple)):
        return type(obj)(_from_shared(x) for x in obj)
    if isinstance(obj, dict):
        return {k: _from_shared(v) for k, v in obj.items()}
    return obj


class _Pool:
    def __init__(
        self,
        dataset: Any,
        collate_fn: Callable,
        num_workers: int,
        use_shared_memory: bool,
        worker_init_fn: Callable | None,
    ) -> None:
        method = start_method()
        ctx = multiprocessing.get_context(method)
        self.result_queue = ctx.Queue()
        self.index_queues = [ctx.Queue() for _ in range(num_workers)]
        self.workers = []
        for wid in range(num_workers):
            w = ctx.Process(
                target=_worker_loop,
                args=(
                    dataset,
                    collate_fn,
                    self.index_queues[wid],
                    self.result_queue,
                    wid,
                    num_workers,
                    worker_init_fn,
                    use_shared_memory,
                ),
                daemon=True,
                name=f"oar-dataloader-worker-{wid}",
            )
            try:
                w.start()
            except (AttributeError, TypeError, pickle.PicklingError) as exc:
                for started in self.workers:
                    started.terminate()
                    started.join(5)
                raise WorkerError(_unpicklable(method, num_workers, exc)) from exc
            self.workers.append(w)

    def check_alive(self) -> None:
        for wid, w in enumerate(self.workers):
            if not w.is_alive():
                raise WorkerError(
                    f"DataLoader worker {wid} (pid {w.pid}) exited unexpectedly with exit code "
                    f"{w.exitcode}" + (" (killed by a signal)" if (w.exitcode or 0) < 0 else "")
                )

    def shutdown(self) -> None:
        for q in self.index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + JOIN_S
        for w in self.workers:
            w.join(max(0.0, deadline - time.monotonic()))
            if w.is_alive():
                w.terminate()
                w.join(JOIN_S)
        # results still queued may hold shared-memory segments: unlink them
        while True:
            try:
                _seq, _wid, kind, payload = self.result_queue.get_nowait()
            except (queue.Empty, OSError, ValueError, EOFError):
                break
            if kind == "shm":
                _from_shared(payload)
        for q in [*self.index_queues, self.result_queue]:
            q.close()
            q.join_thread()


def parallel_batches(
    dataset: Any,
    batches: Iterable,
    collate_fn: Callable,
    num_workers: int,
    use_shared_memory: bool = True,
    timeout: float = 0,
    worker_init_fn: Callable | None = None,
) -> Iterator:
    """Collated batches for each list of indices in ``batches``, in order, from worker processes."""
    pool = _Pool(dataset, collate_fn, num_workers, use_shared_memory, worker_init_fn)
    try:
        jobs = enumerate(batches)
        pending: dict = {}
        sent = received = 0
        exhausted = False

        def fill() -> None:
            nonlocal sent, exhausted
            while not exhausted and sent - received < 2 * num_workers:
                nxt = next(jobs, None)
                if nxt is None:
                    exhausted = True
                    return
                seq, indices = nxt
                pool.index_queues[seq % num_workers].put((seq, list(indices)))
                sent += 1

        fill()
        while received < sent:
            waited = 0.0
            while received not in pending:
                try:
                    seq, wid, kind, payload = pool.result_queue.get(timeout=POLL_S)
                except queue.Empty:
                    pool.check_alive()
                    waited += POLL_S
                    if timeout and waited >= timeout:
                        raise WorkerError(
                            f"DataLoader: no batch from the workers in {timeout} s (timeout)"
                        ) from None
                    continue
                if kind == "error":
                    who = "worker_init_fn" if seq < 0 else f"batch {seq}"
                    raise WorkerError(f"DataLoader worker {wid} failed in {who}:\n{payload}")
                pending[seq] = _from_shared(payload) if kind == "shm" else payload
            batch = pending.pop(received)
            received += 1
            fill()
            yield batch
    finally:
        pool.shutdown()
