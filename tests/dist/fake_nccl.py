"""A host-memory stand-in for ``cupy.cuda.nccl`` and cupy's device runtime.

It follows NCCL's calling convention to the letter — raw pointers, element
counts, datatype and op codes, a stream handle, ``initAll``, unique ids and
group calls — and performs the collective on host memory behind the pointers,
so the NCCL backend's call sequence runs (and can fail) on machines without a GPU.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading

import numpy as np

_CODES = ["int8", "uint8", "int32", "int64", "float16", "float32", "float64"]


def _view(ptr: int, count: int, dtype: np.dtype) -> np.ndarray:
    buf = (ctypes.c_char * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(buf, dtype=dtype, count=count)


class _Clique:
    def __init__(self, size: int) -> None:
        self.size = size
        self.barrier = threading.Barrier(size, timeout=10)
        self.slots: list = [None] * size
        self.joined = 0


class FakeNccl:
    """The ``cupy.cuda.nccl`` module surface the backend uses, plus a call log."""

    available = True

    def __init__(self, unique_id_as_bytes: bool = True) -> None:
        for i, name in enumerate(_CODES):
            setattr(self, f"NCCL_{name.upper()}", i)
        self.NCCL_SUM, self.NCCL_PROD, self.NCCL_MAX, self.NCCL_MIN = range(4)
        self._ufuncs = [np.add, np.multiply, np.maximum, np.minimum]
        self._cliques: dict = {}
        self._lock = threading.Lock()
        self._group = threading.local()
        self.calls: list = []
        self.as_bytes = unique_id_as_bytes
        fake = self

        class NcclCommunicator:
            def __init__(self, ndev: int, commId, rank: int) -> None:
                key = bytes(commId) if fake.as_bytes else bytes(np.asarray(commId, np.int8))
                with fake._lock:
                    clique = fake._cliques.setdefault(key, _Clique(ndev))
                    clique.joined += 1
                self.clique, self.rank, self.aborted = clique, rank, False

            @staticmethod
            def initAll(devices):
                uid = fake.get_unique_id()
                return [NcclCommunicator(len(devices), uid, r) for r in range(len(devices))]

            def _exchange(self, value):
                c = self.clique
                c.slots[self.rank] = value
                c.barrier.wait()
                values = list(c.slots)
                c.barrier.wait()
                return values

            def _log(self, what):
                fake.calls.append((what, self.rank, getattr(fake._group, "depth", 0)))

            def allReduce(self, send, recv, count, datatype, op, stream):
                self._log("allReduce")
                dt = np.dtype(_CODES[datatype])
                parts = self._exchange(_view(send, count, dt).copy())
                out = parts[0].copy()
                for p in parts[1:]:
                    fake._ufuncs[op](out, p, out=out)
                _view(recv, count, dt)[:] = out

            def broadcast(self, send, recv, count, datatype, root, stream):
                self._log("broadcast")
                dt = np.dtype(_CODES[datatype])
                parts = self._exchange(_view(send, count, dt).copy())
                _view(recv, count, dt)[:] = parts[root]

            def allGather(self, send, recv, count, datatype, stream):
                self._log("allGather")
                dt = np.dtype(_CODES[datatype])
                parts = self._exchange(_view(send, count, dt).copy())
                _view(recv, count * len(parts), dt)[:] = np.concatenate(parts)

            def abort(self):
                self.aborted = True
                self.clique.barrier.abort()

            def destroy(self):
                pass

        self.NcclCommunicator = NcclCommunicator

    def get_unique_id(self):
        raw = os.urandom(128)
        return raw if self.as_bytes else tuple(int(v) for v in np.frombuffer(raw, np.int8))

    def groupStart(self):
        self._group.depth = getattr(self._group, "depth", 0) + 1

    def groupEnd(self):
        self._group.depth -= 1


class DeviceArray(np.ndarray):
    """Marks arrays that 'live on the device' in :class:`HostRuntime`."""


class _Stream:
    def __init__(self, done: bool) -> None:
        self.done = done
        self.ptr = 0


class HostRuntime:
    """cupy's runtime surface for the backend, on host memory."""

    xp = np

    def __init__(self, streams_finish: bool = True) -> None:
        self.streams_finish = streams_finish
        self.devices_used: list = []

    def device(self, device_id: int):
        self.devices_used.append(device_id)
        return contextlib.nullcontext()

    def to_device(self, array, device_id: int):
        return np.ascontiguousarray(array).view(DeviceArray)

    def is_device_array(self, array) -> bool:
        return isinstance(array, DeviceArray)

    def to_host(self, array):
        return np.asarray(array).view(np.ndarray)

    def ptr(self, array) -> int:
        return int(array.ctypes.data)

    def stream(self):
        return _Stream(self.streams_finish)

    def stream_ptr(self, stream) -> int:
        return stream.ptr

    def stream_done(self, stream) -> bool:
        return stream.done
