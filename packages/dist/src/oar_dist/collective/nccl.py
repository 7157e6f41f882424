"""The NCCL backend (``cupy.cuda.nccl``): GPU ranks reduce device arrays without a host copy.

Two ways to make ranks, as NCCL has:

- :class:`NcclGroup` — one process drives several GPUs, one thread per place
  (``with_data_parallel`` over ``CUDAPlace`` s): ``NcclCommunicator.initAll``;
- :func:`nccl_job_backend` — one GPU per process (``launch --selected_gpus``, a
  transpiled ``collective`` program): rank 0 makes the unique id, the MPI world
  carries it to the others, each process joins with ``NcclCommunicator(n, id, rank)``.

NCCL calls are asynchronous on the place's stream; a result is complete once the
stream reaches it, which the executor's next kernel on that stream respects. A
collective that does not finish within ``OAR_COLLECTIVE_TIMEOUT`` aborts the
communicator (``ncclCommAbort``) and raises :class:`CollectiveError`, so a dead
peer never hangs the job.

Everything device-specific goes through a small runtime object
(:class:`CupyRuntime`), so the NCCL call sequence itself is exercised on machines
without a GPU by a host-memory runtime and a fake ``nccl`` module (tests).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from oar_dist.collective.base import CollectiveBackend, CollectiveError, check_op
from oar_dist.collective.timeouts import collective_timeout

INSTALL = "pip install oar-kernels-cuda[cuda12] (cupy with NCCL) on a machine with NVIDIA GPUs"

_DTYPES = {
    "int8": "NCCL_INT8",
    "uint8": "NCCL_UINT8",
    "int32": "NCCL_INT32",
    "int64": "NCCL_INT64",
    "float16": "NCCL_FLOAT16",
    "float32": "NCCL_FLOAT32",
    "float64": "NCCL_FLOAT64",
}
_OPS = {"sum": "NCCL_SUM", "prod": "NCCL_PROD", "max": "NCCL_MAX", "min": "NCCL_MIN"}
_POLL_S = 1e-4


def load_nccl() -> Any:
    """``cupy.cuda.nccl``, or an ImportError that says what is missing and how to get it."""
    try:
        from cupy.cuda import nccl
    except Exception as exc:  # ImportError, or a CUDA install that fails at import
        raise ImportError(
            f"the nccl collective backend needs cupy with NCCL: {INSTALL} ({exc})"
        ) from exc
    if not getattr(nccl, "available", True):
        raise ImportError(f"cupy was built without NCCL support: {INSTALL}")
    return nccl


class CupyRuntime:
    """Device arrays, pointers and streams for NCCL calls, from cupy."""

    def __init__(self) -> None:
        import cupy

        self.xp = cupy

    def device(self, device_id: int) -> Any:
        return self.xp.cuda.Device(device_id)

    def to_device(self, array: Any, device_id: int) -> Any:
        with self.device(device_id):
            return self.xp.ascontiguousarray(self.xp.asarray(array))

    def is_device_array(self, array: Any) -> bool:
        return isinstance(array, self.xp.ndarray)

    def to_host(self, array: Any) -> np.ndarray:
        return self.xp.asnumpy(array)

    def ptr(self, array: Any) -> int:
        return int(array.data.ptr)

    def stream(self) -> Any:
        return self.xp.cuda.get_current_stream()

    def stream_ptr(self, stream: Any) -> int:
        return int(stream.ptr)

    def stream_done(self, stream: Any) -> bool:
        return bool(stream.done)


class NcclBackend(CollectiveBackend):
    """Rank ``rank`` of an NCCL communicator, on GPU ``device_id``.

    Arrays may be device arrays (reduced in place on the GPU, results stay there)
    or host arrays (copied in and the result copied back, for host-side callers).
    """

    name = "nccl"

    def __init__(
        self,
        comm: Any,
        rank: int,
        size: int,
        device_id: int,
        *,
        nccl: Any,
        runtime: Any,
        timeout: float | None = None,
    ) -> None:
        self.comm, self.rank, self.size, self.device_id = comm, rank, size, device_id
        self._nccl, self._rt = nccl, runtime
        self.timeout = collective_timeout() if timeout is None else timeout
        self._closed = False

    # --- helpers -------------------------------------------------------------------------------
    def _dtype(self, array: Any, what: str) -> int:
        name = _DTYPES.get(str(array.dtype))
        if name is None:
            raise CollectiveError(
                f"nccl backend: {what} of dtype {array.dtype} is not supported by NCCL "
                f"(supported: {', '.join(_DTYPES)})"
            )
        return getattr(self._nccl, name)

    @contextlib.contextmanager
    def _on_device(self, array: Any) -> Iterator[tuple]:
        """(device array, restore) within this rank's device; ``restore`` maps a result back
        to the caller's kind of array (host in, host out)."""
        if self._closed:
            raise CollectiveError(f"nccl backend: rank {self.rank} was closed or aborted")
        rt = self._rt
        with rt.device(self.device_id):
            if rt.is_device_array(array):
                yield rt.xp.ascontiguousarray(array), lambda out: out
            else:
                yield rt.to_device(array, self.device_id), rt.to_host

    def _wait(self, stream: Any, what: str) -> None:
        """Wait until ``stream`` has run the collective, or abort the communicator at the deadline."""
        deadline = time.monotonic() + self.timeout
        while not self._rt.stream_done(stream):
            if time.monotonic() > deadline:
                self.abort()
                raise CollectiveError(
                    f"nccl backend: rank {self.rank} (GPU {self.device_id}) gave up in {what}: "
                    f"another rank failed or did not arrive within {self.timeout:g} s "
                    f"(OAR_COLLECTIVE_TIMEOUT); the communicator was aborted"
                )
            time.sleep(_POLL_S)

    def _call(self, what: str, fn: Any, *args: Any) -> None:
        stream = self._rt.stream()
        try:
            fn(*args, self._rt.stream_ptr(stream))
        except CollectiveError:
            raise
        except Exception as exc:  # NcclError from cupy
            raise CollectiveError(
                f"nccl backend: {what} failed on rank {self.rank} (GPU {self.device_id}): {exc}"
            ) from exc
        self._wait(stream, what)

    # --- collectives ---------------------------------------------------------------------------
    def allreduce(self, array: Any, op: str = "sum") -> Any:
        check_op(op, "allreduce")
        with self._on_device(array) as (x, restore):
            out = self._rt.xp.empty_like(x)
            self._call(
                "allreduce",
                self.comm.allReduce,
                self._rt.ptr(x),
                self._rt.ptr(out),
                x.size,
                self._dtype(x, "allreduce"),
                getattr(self._nccl, _OPS[op]),
            )
            return restore(out)

    def allreduce_many(self, arrays: Sequence[Any], op: str = "sum", bucket_bytes: int = 0) -> list:
        """All tensors in one NCCL group call: one launch, no packing copies (the device
        memory of a bucket would cost more than NCCL's own fusion of grouped calls)."""
        check_op(op, "allreduce")
        if not arrays:
            return []
        rt = self._rt
        with contextlib.ExitStack() as stack:
            staged = [stack.enter_context(self._on_device(a)) for a in arrays]
            outs = [rt.xp.empty_like(x) for x, _ in staged]
            code = getattr(self._nccl, _OPS[op])

            def grouped(stream_ptr: int) -> None:
                self._nccl.groupStart()
                try:
                    for (x, _), out in zip(staged, outs):
                        self.comm.allReduce(
                            rt.ptr(x),
                            rt.ptr(out),
                            x.size,
                            self._dtype(x, "allreduce"),
                            code,
                            stream_ptr,
                        )
                finally:
                    self._nccl.groupEnd()

            self._call("allreduce", grouped)
            return [restore(out) for (_, restore), out in zip(staged, outs)]

    def broadcast(self, array: Any, root: int = 0) -> Any:
        if not 0 <= root < self.size:
            raise ValueError(f"broadcast: root {root} is out of range for {self.size} ranks")
        with self._on_device(array) as (x, restore):
            out = self._rt.xp.empty_like(x)
            self._call(
                "broadcast",
                self.comm.broadcast,
                self._rt.ptr(x),
                self._rt.ptr(out),
                x.size,
                self._dtype(x, "broadcast"),
                root,
            )
            return restore(out)

    def allgather(self, array: Any) -> Any:
        with self._on_device(array) as (x, restore):
            out = self._rt.xp.empty((self.size * x.shape[0], *x.shape[1:]), dtype=x.dtype)
            self._call(
                "allgather",
                self.comm.allGather,
                self._rt.ptr(x),
                self._rt.ptr(out),
                x.size,
                self._dtype(x, "allgather"),
            )
            return restore(out)

    def barrier(self) -> None:
        self.allreduce(np.zeros(1, dtype="float32"))

    def abort(self) -> None:
        """End this rank's communicator at once (peers waiting on it fail instead of hanging)."""
        if not self._closed:
            self._closed = True
            with contextlib.suppress(Exception):
                self.comm.abort()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            with contextlib.suppress(Exception):
                self.comm.destroy()


class NcclGroup:
    """The NCCL ranks of one process, one per GPU in ``device_ids`` (``member(r)`` drives rank r).

    Mirrors :class:`~oar_dist.collective.threads.ThreadGroup`, so the data-parallel
    runner uses either the same way: one thread per place, each with its member.
    """

    def __init__(
        self,
        device_ids: Sequence[int],
        outer: CollectiveBackend | None = None,
        *,
        nccl: Any = None,
        runtime: Any = None,
        timeout: float | None = None,
    ) -> None:
        ids = [int(d) for d in device_ids]
        if not ids or len(set(ids)) != len(ids):
            raise ValueError(f"NcclGroup: device ids must be distinct and non-empty, given {ids}")
        nccl = nccl if nccl is not None else load_nccl()
        runtime = runtime if runtime is not None else CupyRuntime()
        n = len(ids)
        first = 0 if outer is None else outer.rank * n
        self.size = n if outer is None else outer.size * n
        try:
            comms = (
                nccl.NcclCommunicator.initAll(ids)
                if outer is None
                else _join_spanning(nccl, runtime, ids, outer, first, self.size)
            )
        except CollectiveError:
            raise
        except Exception as exc:
            raise CollectiveError(
                f"nccl backend: cannot create communicators on GPUs {ids}: {exc}"
            ) from exc
        self.device_ids = ids
        self.members = [
            NcclBackend(c, first + k, self.size, d, nccl=nccl, runtime=runtime, timeout=timeout)
            for k, (c, d) in enumerate(zip(comms, ids))
        ]
        self._aborted = False

    def member(self, rank: int) -> NcclBackend:
        return self.members[rank]

    def abort(self) -> None:
        """A place failed: abort every rank so the others leave their collectives."""
        self._aborted = True
        for m in self.members:
            m.abort()

    @property
    def broken(self) -> bool:
        return self._aborted

    def close(self) -> None:
        for m in self.members:
            m.close()


def _join_spanning(
    nccl: Any, runtime: Any, ids: list, outer: CollectiveBackend, first: int, size: int
) -> list:
    """Communicators for local GPUs ``ids`` as ranks ``first..`` of ``size`` across processes."""
    uid = nccl.get_unique_id()
    uid = unique_id_from_array(outer.broadcast(unique_id_to_array(uid), root=0), uid)
    comms = []
    nccl.groupStart()  # one thread joins several ranks: NCCL needs them in one group
    try:
        for k, d in enumerate(ids):
            with runtime.device(d):
                comms.append(nccl.NcclCommunicator(size, uid, first + k))
    finally:
        nccl.groupEnd()
    return comms


def make_nccl_group(device_ids: Sequence[int], outer: CollectiveBackend | None = None) -> NcclGroup:
    """The data-parallel runner's NCCL ranks for its GPU places (``outer``: the trainers' ring)."""
    return NcclGroup(device_ids, outer)


@contextlib.contextmanager
def current_gpu(device_id: int | None) -> Iterator[None]:
    """Within the block this thread's cupy allocations and kernels go to GPU ``device_id``."""
    if device_id is None:
        yield
        return
    with CupyRuntime().device(device_id):
        yield


def unique_id_to_array(uid: Any) -> np.ndarray:
    """An NCCL unique id (bytes, or a tuple of signed chars in older cupy) as uint8 for MPI."""
    if isinstance(uid, (bytes, bytearray)):
        return np.frombuffer(bytes(uid), dtype=np.uint8).copy()
    return np.asarray(uid, dtype=np.int64).astype(np.int8).view(np.uint8)


def unique_id_from_array(array: np.ndarray, like: Any) -> Any:
    """The inverse of :func:`unique_id_to_array`, in the form the installed cupy takes (``like``)."""
    raw = np.ascontiguousarray(array, dtype=np.uint8)
    if isinstance(like, (bytes, bytearray)):
        return raw.tobytes()
    return tuple(int(v) for v in raw.view(np.int8))


def nccl_job_backend(
    rank: int,
    nranks: int,
    device_id: int,
    bootstrap: CollectiveBackend,
    *,
    nccl: Any = None,
    runtime: Any = None,
    timeout: float | None = None,
) -> NcclBackend:
    """This process's rank of an ``nranks``-GPU communicator spanning processes.

    ``bootstrap`` (the MPI world) carries rank 0's unique id to the others, as
    Fluid's ``c_gen_nccl_id`` does over its sockets.
    """
    nccl = nccl if nccl is not None else load_nccl()
    runtime = runtime if runtime is not None else CupyRuntime()
    if bootstrap.size != nranks or bootstrap.rank != rank:
        raise CollectiveError(
            f"nccl backend: asked for rank {rank} of {nranks}, but the bootstrap communicator "
            f"({bootstrap.name}) is rank {bootstrap.rank} of {bootstrap.size}"
        )
    uid = nccl.get_unique_id()
    shared = bootstrap.broadcast(unique_id_to_array(uid), root=0)
    with runtime.device(device_id):
        try:
            comm = nccl.NcclCommunicator(nranks, unique_id_from_array(shared, uid), rank)
        except Exception as exc:
            raise CollectiveError(
                f"nccl backend: rank {rank} of {nranks} (GPU {device_id}) could not join: {exc}"
            ) from exc
    return NcclBackend(comm, rank, nranks, device_id, nccl=nccl, runtime=runtime, timeout=timeout)
