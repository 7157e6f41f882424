"""Background threads feeding bounded queues, with errors and early stops handled.

Every producer thread holds only the queue, a stop event and the source, never
the consumer object, so dropping the consumer (or calling ``close``) stops
the thread: it checks the stop event between items and while waiting on a
full queue. A failure in the producer is put on the queue as a
:class:`Failure` and raised in the consumer with its original traceback.

A producer blocked inside the user's generator (waiting for data that does
not come) cannot see the stop event. ``close`` then waits ``GRACE_S`` and
raises :class:`Stopped` inside that thread (``PyThreadState_SetAsyncExc``),
only while the thread is in the user's code: a generator blocked in Python
code (a polling loop, ``time.sleep`` in steps) ends at once, one blocked in a
single C call (``time.sleep(60)``, ``lock.acquire()``) as soon as that call
returns, without producing anything more. ``close`` returns within about
``GRACE_S + INTERRUPT_JOIN_S`` either way.
"""

from __future__ import annotations

import ctypes
import itertools
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

POLL_S = 0.05
JOIN_S = 5.0  # threads that run no user code (given no UserCode): they watch the stop event
GRACE_S = 0.1  # a producer reading the user's source gets this long to notice the stop ...
INTERRUPT_JOIN_S = 0.4  # ... and this long to unwind after being interrupted


class Stopped(BaseException):
    """Raised inside a producer thread that is blocked in the user's source when it is closed."""


class UserCode:
    """Marks when a producer thread runs the user's source, so ``close`` may interrupt it there."""

    __slots__ = ("_lock", "_inside", "ident")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inside = False
        self.ident: int | None = None

    def __enter__(self) -> UserCode:
        with self._lock:
            self._inside = True
        return self

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            self._inside = False

    def interrupt(self) -> bool:
        """Raise :class:`Stopped` in the producer if it is inside the user's code now."""
        with self._lock:
            if not self._inside or self.ident is None:
                return False
            hit = ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(self.ident), ctypes.py_object(Stopped)
            )
            return hit == 1


class _End:
    """Marks the end of a producer's stream."""


END = _End()


class Failure:
    """An exception raised in a producer thread, to re-raise in the consumer."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def put(q: queue.Queue, item: Any, stop: threading.Event) -> bool:
    """Put ``item`` unless ``stop`` is set first; returns whether it was put."""
    while not stop.is_set():
        try:
            q.put(item, timeout=POLL_S)
            return True
        except queue.Full:
            continue
    return False


def get(q: queue.Queue, threads: list, what: str) -> Any:
    """Take the next item, failing clearly if every producer died without a word."""
    while True:
        try:
            return q.get(timeout=POLL_S * 4)
        except queue.Empty:
            if not any(t.is_alive() for t in threads):
                try:
                    return q.get_nowait()
                except queue.Empty:
                    raise RuntimeError(
                        f"{what}: the background thread stopped without a result"
                    ) from None


def _close_iter(it: Any) -> None:
    close = getattr(it, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # closing a user generator must not hide the real outcome
            pass


def _produce(
    source: Callable,
    q: queue.Queue,
    stop: threading.Event,
    transform: Callable | None,
    pass_stop: bool = False,
    user: UserCode | None = None,
) -> None:
    it = None
    if user is None:
        user = UserCode()  # never interrupted: nobody else holds it
    user.ident = threading.get_ident()
    try:
        with user:
            it = iter(source(stop) if pass_stop else source())
        while not stop.is_set():
            with user:
                item = next(it, END)
            if item is END:
                put(q, END, stop)
                return
            if transform is not None:
                item = transform(item)
            if not put(q, item, stop):
                return
    except Stopped:  # closed while blocked in the user's source
        return
    except BaseException as exc:  # any failure goes to the consumer
        put(q, Failure(exc), stop)
    finally:
        if it is not None:
            _close_iter(it)


def _stop_and_join(stop: threading.Event, q: queue.Queue, threads: list, users: tuple = ()) -> None:
    stop.set()
    try:
        while True:
            q.get_nowait()
    except queue.Empty:
        pass
    current = threading.current_thread()
    others = [t for t in threads if t is not current]
    if not users:
        for t in others:
            t.join(JOIN_S)
        return
    for t in others:
        t.join(GRACE_S)
    if any(t.is_alive() for t in others):
        for user in users:
            user.interrupt()
        deadline = time.monotonic() + INTERRUPT_JOIN_S
        for t in others:
            t.join(max(0.0, deadline - time.monotonic()))


class BackgroundIter:
    """Iterate ``source()`` in a daemon thread, ``size`` items ahead, optionally transforming each.

    Iterating yields the (transformed) items; a producer exception is raised
    here. ``close()`` (also run when the object is garbage-collected) stops
    and joins the thread, interrupting it if it is blocked in ``source``
    (see the module docstring), so it returns in well under a second. With ``pass_stop`` the source is called as
    ``source(stop_event)``, so a source that blocks can watch for the stop.
    """

    def __init__(
        self,
        source: Callable,
        size: int,
        name: str = "oar-reader",
        transform: Callable | None = None,
        pass_stop: bool = False,
    ) -> None:
        self._q: queue.Queue = queue.Queue(maxsize=size)
        self._stop = threading.Event()
        # a source given the stop event watches it itself; a plain one may be interrupted
        user = None if pass_stop else UserCode()
        self._thread = threading.Thread(
            target=_produce,
            args=(source, self._q, self._stop, transform, pass_stop, user),
            name=name,
            daemon=True,
        )
        self._done = False
        self._finalizer = weakref.finalize(
            self, _stop_and_join, self._stop, self._q, [self._thread], (user,) if user else ()
        )
        self._thread.start()

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> Any:
        if self._done:
            raise StopIteration
        item = get(self._q, [self._thread], "reader")
        if item is END:
            self.close()
            raise StopIteration
        if isinstance(item, Failure):
            self.close()
            raise item.exc
        return item

    def close(self) -> None:
        self._done = True
        self._finalizer()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()


class ThreadPoolMap:
    """``map(mapper, reader())`` over ``workers`` threads with ``buffer_size`` items in flight."""

    def __init__(
        self, mapper: Callable, reader: Callable, workers: int, buffer_size: int, order: bool
    ) -> None:
        self._in: queue.Queue = queue.Queue(maxsize=buffer_size)
        self._out: queue.Queue = queue.Queue(maxsize=buffer_size)
        self._stop = threading.Event()
        self._order = order
        self._workers = workers
        self._ended = 0
        self._next_idx = 0
        self._pending: dict = {}
        self._done = False
        # the feeder runs the user's reader and the workers the user's mapper: either may block
        users = tuple(UserCode() for _ in range(workers + 1))
        feeder = threading.Thread(
            target=_feed,
            args=(reader, self._in, self._out, self._stop, workers, users[0]),
            name="oar-xmap-feed",
            daemon=True,
        )
        self._threads = [feeder] + [
            threading.Thread(
                target=_work,
                args=(mapper, self._in, self._out, self._stop, users[i + 1]),
                name=f"oar-xmap-{i}",
                daemon=True,
            )
            for i in range(workers)
        ]
        both = _Both(self._in, self._out)
        self._finalizer = weakref.finalize(
            self, _stop_and_join, self._stop, both, self._threads, users
        )
        for t in self._threads:
            t.start()

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> Any:
        while not self._done:
            if self._order and self._next_idx in self._pending:
                item = self._pending.pop(self._next_idx)
                self._next_idx += 1
                return item
            got = get(self._out, self._threads, "xmap_readers")
            if got is END:
                self._ended += 1
                if self._ended == self._workers:
                    self.close()
                    break
                continue
            if isinstance(got, Failure):
                self.close()
                raise got.exc
            idx, value = got
            if not self._order:
                return value
            self._pending[idx] = value
        raise StopIteration

    def close(self) -> None:
        self._done = True
        self._finalizer()


class _Both:
    """Drains two queues as one (for :func:`_stop_and_join`)."""

    def __init__(self, a: queue.Queue, b: queue.Queue) -> None:
        self.a, self.b = a, b

    def get_nowait(self) -> Any:
        try:
            return self.a.get_nowait()
        except queue.Empty:
            return self.b.get_nowait()


def _feed(
    reader: Callable,
    q_in: queue.Queue,
    q_out: queue.Queue,
    stop: threading.Event,
    workers: int,
    user: UserCode,
) -> None:
    it = None
    user.ident = threading.get_ident()
    try:
        with user:
            it = iter(reader())
        for idx in itertools.count():
            if stop.is_set():
                return
            with user:
                sample = next(it, END)
            if sample is END:
                break
            if not put(q_in, (idx, sample), stop):
                return
    except Stopped:  # closed while blocked in the user's reader
        return
    except BaseException as exc:
        put(q_out, Failure(exc), stop)
    finally:
        if it is not None:
            _close_iter(it)
        for _ in range(workers):
            put(q_in, END, stop)


def _work(
    mapper: Callable, q_in: queue.Queue, q_out: queue.Queue, stop: threading.Event, user: UserCode
) -> None:
    user.ident = threading.get_ident()
    while not stop.is_set():
        try:
            got = q_in.get(timeout=POLL_S)
        except queue.Empty:
            continue
        if got is END:
            put(q_out, END, stop)
            return
        idx, sample = got
        try:
            with user:
                result = mapper(sample)
        except Stopped:  # closed while blocked in the user's mapper
            return
        except BaseException as exc:
            put(q_out, Failure(exc), stop)
            return
        if not put(q_out, (idx, result), stop):
            return
