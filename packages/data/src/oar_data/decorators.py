"""Reader decorators: functions that take readers and return a new reader.

A reader is a zero-argument callable returning an iterable of samples. These
decorators compose readers lazily: nothing is read until the returned reader
is called and iterated. Background threads and processes started by
``buffered``, ``xmap_readers`` and ``multiprocess_reader`` stop when the
iteration ends, raises, or is abandoned (the generator is closed).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable
from typing import Any

from oar_data._background import BackgroundIter, ThreadPoolMap
from oar_data._procs import ProcessMerge

Reader = Callable[[], Iterable]

__all__ = [
    "ComposeNotAligned",
    "map_readers",
    "buffered",
    "compose",
    "chain",
    "shuffle",
    "firstn",
    "xmap_readers",
    "multiprocess_reader",
    "cache",
]


class ComposeNotAligned(ValueError):
    """``compose(check_alignment=True)`` found readers of different lengths."""


def _check_reader(fn: str, reader: Any) -> None:
    if not callable(reader):
        raise TypeError(
            f"{fn}: a reader must be a zero-argument callable returning an iterable, "
            f"given {type(reader).__name__} (pass the reader function, not its result)"
        )


def map_readers(func: Callable, *readers: Reader) -> Reader:
    """A reader yielding ``func(*items)`` for the items of ``readers`` taken in step."""
    for r in readers:
        _check_reader("map_readers", r)

    def reader():
        for items in zip(*(r() for r in readers)):
            yield func(*items)

    return reader


def shuffle(reader: Reader, buf_size: int) -> Reader:
    """Shuffle within consecutive windows of ``buf_size`` samples (the last window may be shorter)."""
    _check_reader("shuffle", reader)
    if not isinstance(buf_size, int) or buf_size <= 0:
        raise ValueError(f"shuffle: buf_size must be a positive int, given {buf_size!r}")

    def shuffled():
        buf = []
        for item in reader():
            buf.append(item)
            if len(buf) >= buf_size:
                random.shuffle(buf)
                yield from buf
                buf = []
        if buf:
            random.shuffle(buf)
            yield from buf

    return shuffled


def chain(*readers: Reader) -> Reader:
    """All samples of the first reader, then all of the second, and so on."""
    for r in readers:
        _check_reader("chain", r)

    def reader():
        return itertools.chain.from_iterable(r() for r in readers)

    return reader


def _as_tuple(x: Any) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def compose(*readers: Reader, **kwargs: Any) -> Reader:
    """Zip readers into one, flattening tuple items: ``(a, b)`` and ``c`` give ``(a, b, c)``.

    ``check_alignment=True`` (the default) raises :class:`ComposeNotAligned` if
    the readers end at different lengths; ``False`` stops at the shortest.
    """
    check_alignment = kwargs.pop("check_alignment", True)
    if kwargs:
        raise TypeError(f"compose: unexpected keyword arguments {sorted(kwargs)}")
    for r in readers:
        _check_reader("compose", r)
    end = object()

    def reader():
        its = [r() for r in readers]
        if not check_alignment:
            for outputs in zip(*its):
                yield sum((_as_tuple(o) for o in outputs), ())
            return
        for outputs in itertools.zip_longest(*its, fillvalue=end):
            if any(o is end for o in outputs):
                lengths = "some readers ended before others"
                raise ComposeNotAligned(
                    f"compose: the readers are not aligned ({lengths}); pass check_alignment=False "
                    f"to stop at the shortest"
                )
            yield sum((_as_tuple(o) for o in outputs), ())

    return reader


def buffered(reader: Reader, size: int) -> Reader:
    """Read ahead up to ``size`` samples in a background thread."""
    _check_reader("buffered", reader)
    if not isinstance(size, int) or size <= 0:
        raise ValueError(f"buffered: size must be a positive int, given {size!r}")

    def data_reader():
        it = BackgroundIter(reader, size, name="oar-buffered")
        try:
            yield from it
        finally:
            it.close()

    return data_reader


def firstn(reader: Reader, n: int) -> Reader:
    """At most the first ``n`` samples of ``reader``."""
    _check_reader("firstn", reader)
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"firstn: n must be a non-negative int, given {n!r}")

    def firstn_reader():
        return itertools.islice(reader(), n)

    return firstn_reader


def xmap_readers(
    mapper: Callable, reader: Reader, process_num: int, buffer_size: int, order: bool = False
) -> Reader:
    """Map samples with ``process_num`` worker threads, ``buffer_size`` samples in flight.

    ``order=True`` keeps the input order; otherwise samples come out as they
    finish. Threads help when the mapper releases the GIL (numpy, I/O, image
    decoding); an exception in the mapper is raised in the consumer.
    """
    _check_reader("xmap_readers", reader)
    if not isinstance(process_num, int) or process_num <= 0:
        raise ValueError(f"xmap_readers: process_num must be a positive int, given {process_num!r}")
    if not isinstance(buffer_size, int) or buffer_size <= 0:
        raise ValueError(f"xmap_readers: buffer_size must be a positive int, given {buffer_size!r}")

    def xreader():
        pool = ThreadPoolMap(mapper, reader, process_num, buffer_size, order)
        try:
            yield from pool
        finally:
            pool.close()

    return xreader


def multiprocess_reader(readers: list, use_pipe: bool = True, queue_size: int = 1000) -> Reader:
    """Run each reader in its own process and merge their samples (in no fixed order).

    ``use_pipe=True`` sends samples through one pipe per process, ``False``
    through one shared queue of ``queue_size``. Samples must be picklable. An
    exception in a child is raised in the consumer; stopping early terminates
    the children.
    """
    if not isinstance(readers, (list, tuple)) or not readers:
        raise ValueError("multiprocess_reader: readers must be a non-empty list of readers")
    for r in readers:
        _check_reader("multiprocess_reader", r)

    def reader():
        merge = ProcessMerge(list(readers), use_pipe, queue_size)
        try:
            yield from merge
        finally:
            merge.close()

    return reader


def cache(reader: Reader) -> Reader:
    """Read ``reader`` once, now, and replay its samples from memory on every call."""
    _check_reader("cache", reader)
    all_data = tuple(reader())

    def cached():
        return iter(all_data)

    return cached
