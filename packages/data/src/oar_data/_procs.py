"""Child processes running readers, merged into one stream (``multiprocess_reader``).

Readers are usually closures, which cannot be pickled, so children are
forked. Each child sends its samples, then an end marker, or a failure with
the formatted traceback. ``close()`` terminates children still running and
joins them all, so no process outlives the iteration.
"""

from __future__ import annotations

import multiprocessing as mp
import traceback
from collections.abc import Iterator
from multiprocessing.connection import wait
from typing import Any

POLL_S = 0.1
_END = "__oar_reader_end__"
_FAIL = "__oar_reader_failure__"


class ReaderProcessError(RuntimeError):
    """A reader running in a child process raised; the message carries its traceback."""


def _child_pipe(reader: Any, conn: Any) -> None:
    try:
        for sample in reader():
            conn.send(sample)
        conn.send(_END)
    except BaseException as exc:
        conn.send((_FAIL, repr(exc), traceback.format_exc()))
    finally:
        conn.close()


def _child_queue(reader: Any, q: Any) -> None:
    try:
        for sample in reader():
            q.put(sample)
        q.put(_END)
    except BaseException as exc:
        q.put((_FAIL, repr(exc), traceback.format_exc()))


def _is_fail(x: Any) -> bool:
    return isinstance(x, tuple) and len(x) == 3 and isinstance(x[0], str) and x[0] == _FAIL


def _is_end(x: Any) -> bool:
    return isinstance(x, str) and x == _END


class ProcessMerge:
    """Iterate the samples of several readers, each run in its own forked process."""

    def __init__(self, readers: list, use_pipe: bool, queue_size: int, stop: Any = None) -> None:
        ctx = mp.get_context("fork")
        self._stop = stop  # a threading.Event: when set, the merge ends (and its children with it)
        self._use_pipe = use_pipe
        self._procs: list = []
        self._conns: list = []
        self._queue = None
        self._remaining = len(readers)
        if use_pipe:
            for r in readers:
                parent, child = ctx.Pipe(duplex=False)
                p = ctx.Process(target=_child_pipe, args=(r, child), daemon=True)
                p.start()
                child.close()
                self._procs.append(p)
                self._conns.append(parent)
        else:
            self._queue = ctx.Queue(maxsize=queue_size)
            for r in readers:
                p = ctx.Process(target=_child_queue, args=(r, self._queue), daemon=True)
                p.start()
                self._procs.append(p)
        self._buffer: list = []

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> Any:
        while True:
            if self._buffer:
                item = self._buffer.pop(0)
            elif self._remaining == 0:
                self.close()
                raise StopIteration
            else:
                if self._stop is not None and self._stop.is_set():
                    self.close()
                    raise StopIteration
                item = self._receive()
                if item is None:
                    continue
            if _is_end(item):
                self._remaining -= 1
                continue
            if _is_fail(item):
                self.close()
                raise ReaderProcessError(
                    f"multiprocess_reader: a reader raised {item[1]} in its process:\n{item[2]}"
                )
            return item

    def _receive(self) -> Any:
        if self._use_pipe:
            ready = wait(self._conns, timeout=POLL_S)
            if not ready:
                self._check_children()
                return None
            for conn in ready:
                try:
                    got = conn.recv()
                    if _is_end(got):
                        self._conns.remove(conn)
                        conn.close()
                        self._remaining -= 1
                    else:
                        self._buffer.append(got)
                except EOFError:  # the child closed without an end marker: it died
                    self._conns.remove(conn)
                    self._remaining -= 1
                    self.close()
                    raise ReaderProcessError(
                        "multiprocess_reader: a reader process died unexpectedly"
                    ) from None
            return None
        import queue as _queue

        try:
            return self._queue.get(timeout=POLL_S)
        except _queue.Empty:
            self._check_children()
            return None

    def _check_children(self) -> None:
        dead = [p for p in self._procs if not p.is_alive() and p.exitcode not in (0, None)]
        if dead:
            codes = [p.exitcode for p in dead]
            self.close()
            raise ReaderProcessError(
                f"multiprocess_reader: reader process(es) died with exit codes {codes}"
            )

    def close(self) -> None:
        for p in self._procs:
            if p.is_alive():
                p.terminate()
        for p in self._procs:
            p.join(5.0)
        for c in self._conns:
            c.close()
        self._conns = []
        if self._queue is not None:
            self._queue.close()
            self._queue.join_thread()
            self._queue = None
        self._procs = []
        self._remaining = 0

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
