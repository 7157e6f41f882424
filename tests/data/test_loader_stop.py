"""DataLoader early exit with a blocked generator, and non-iterable loaders re-created on a program."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from oar import fluid
from oar.errors import EOFException


def _loader_threads() -> list:
    return [t for t in threading.enumerate() if t.name == "oar-dataloader" and t.is_alive()]


def _wait_gone(limit: float) -> bool:
    deadline = time.monotonic() + limit
    while _loader_threads() and time.monotonic() < deadline:
        time.sleep(0.02)
    return not _loader_threads()


def _iterable_loader(generator):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", shape=[2], dtype="float32")
        loader = fluid.io.DataLoader.from_generator(feed_list=[x], capacity=2, iterable=True)
    loader.set_batch_generator(generator, places=fluid.cpu_places(1))
    return loader


def test_break_with_a_generator_blocked_in_python_code_returns_at_once_and_leaves_no_thread():
    release = threading.Event()  # never set: the generator waits for data that never comes

    def batches():
        yield [np.ones((1, 2), "float32")]
        while not release.is_set():
            time.sleep(0.005)
        yield [np.zeros((1, 2), "float32")]

    assert _wait_gone(5)
    start = time.monotonic()
    for _data in _iterable_loader(batches)():
        break
    took = time.monotonic() - start
    assert took < 1.0, f"break took {took:.2f} s"
    assert _wait_gone(0.5), "the loader thread is still running"


def test_break_with_a_generator_blocked_in_one_long_call_returns_promptly():
    produced = []

    def batches():
        yield [np.ones((1, 2), "float32")]
        time.sleep(1.5)  # one C call: cannot be interrupted, only left unfinished
        produced.append("after sleep")
        yield [np.zeros((1, 2), "float32")]

    assert _wait_gone(5)
    start = time.monotonic()
    for _data in _iterable_loader(batches)():
        break
    assert time.monotonic() - start < 1.0
    assert _wait_gone(5), "the loader thread did not end after the blocking call returned"
    assert produced == []  # stopped where it was: nothing after the sleep ran


def test_recreating_a_non_iterable_loader_replaces_the_stale_one():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[2], dtype="float32")
        y = fluid.layers.scale(x, 2.0)
    exe = fluid.Executor(fluid.CPUPlace())

    def epoch_of(value):
        def batches():
            for _ in range(3):
                yield [np.full((1, 2), value, "float32")]

        return batches

    old = None
    for epoch in range(3):  # a script that builds its loader again every epoch
        with fluid.program_guard(main, startup):
            loader = fluid.io.DataLoader.from_generator(feed_list=[x], capacity=4, iterable=False)
        loader.set_batch_generator(epoch_of(epoch))
        assert main._readers == [loader]
        loader.start()
        seen = []
        with pytest.raises(EOFException):
            while True:
                seen.append(exe.run(main, fetch_list=[y])[0][0, 0])
        loader.reset()
        assert seen == [2.0 * epoch] * 3
        if old is not None:
            with pytest.raises(RuntimeError, match="replaced by a newer DataLoader"):
                old.start()
        old = loader


def test_a_running_stale_loader_is_stopped_when_replaced():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[2], dtype="float32")
        first = fluid.io.DataLoader.from_generator(feed_list=[x], capacity=2, iterable=False)

    def forever():
        while True:
            yield [np.ones((1, 2), "float32")]

    first.set_batch_generator(forever)
    first.start()
    assert _loader_threads()
    start = time.monotonic()
    with fluid.program_guard(main, startup):
        second = fluid.io.DataLoader.from_generator(feed_list=[x], capacity=2, iterable=False)
    assert time.monotonic() - start < 1.0
    assert main._readers == [second]
    assert _wait_gone(1.0)


def _threads_named(prefix: str) -> list:
    return [t for t in threading.enumerate() if t.name.startswith(prefix) and t.is_alive()]


def test_break_out_of_buffered_and_xmap_readers_with_blocked_user_code():
    import oar

    release = threading.Event()

    def reader():
        yield 1
        yield 2
        while not release.is_set():  # blocked: no third sample comes
            time.sleep(0.005)

    def slow_mapper(x):
        if x == 2:
            while not release.is_set():  # a mapper stuck on one sample
                time.sleep(0.005)
        return x * 10

    for make, prefix in (
        (lambda: oar.reader.buffered(reader, 2), "oar-buffered"),
        (lambda: oar.reader.xmap_readers(slow_mapper, reader, 2, 4, order=True), "oar-xmap"),
    ):
        start = time.monotonic()
        for got in make()():
            assert got in (1, 10)
            break
        took = time.monotonic() - start
        assert took < 1.0, f"{prefix}: break took {took:.2f} s"
        deadline = time.monotonic() + 0.5
        while _threads_named(prefix) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _threads_named(prefix), f"{prefix}: threads left"
