"""Scratch buffers (``oar.api.scratch``): reused per thread and role, bounded by recent use,
and released for every thread at once."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from oar import scratch as mod
from oar.api import release_scratch, scratch, scratch_bytes


@pytest.fixture(autouse=True)
def _clean():
    release_scratch()
    yield
    release_scratch()


def test_a_role_reuses_its_buffer_per_dtype():
    a = scratch(np, "cols", (4, 5), np.float32)
    b = scratch(np, "cols", (2, 3), np.float32)
    assert np.shares_memory(a, b) and b.shape == (2, 3) and b.flags.c_contiguous
    assert not np.shares_memory(a, scratch(np, "prod", (4, 5), np.float32))
    assert not np.shares_memory(a, scratch(np, "cols", (4, 5), np.float64))
    assert scratch_bytes() == 20 * 4 + 20 * 4 + 20 * 8


def test_release_drops_the_buffers_of_every_thread():
    ready, done = threading.Event(), threading.Event()
    held = []

    def worker():
        held.append(scratch(np, "cols", (1000,), np.float32))
        ready.set()
        done.wait(10)

    t = threading.Thread(target=worker)
    t.start()
    try:
        assert ready.wait(10)
        scratch(np, "cols", (10,), np.float32)
        assert scratch_bytes() == 4000 + 40  # the other thread's buffer counts too
        release_scratch()  # from this thread
        assert scratch_bytes() == 0
        assert held[0].shape == (1000,)  # an array handed out stays usable
        held[0][...] = 1
    finally:
        done.set()
        t.join(10)


def test_a_buffer_is_kept_by_its_recent_use(monkeypatch):
    monkeypatch.setattr(mod, "REVIEW_CALLS", 4)  # a review every 4th call on this thread
    release_scratch()
    scratch(np, "cols", (1000,), np.float32)  # a large model's chunk, once
    scratch(np, "acc", (100,), np.float32)  # a role nothing asks for again
    scratch(np, "cols", (300,), np.float32)
    small = scratch(np, "cols", (300,), np.float32)  # review: both used since the start
    assert scratch_bytes() == 4000 + 400
    for _ in range(3):
        scratch(np, "cols", (300,), np.float32)
    assert scratch_bytes() == 4000 + 400  # kept until the next review ...
    scratch(np, "cols", (300,), np.float32)  # ... which drops acc (unused) and cols
    assert scratch_bytes() == 0  # (more than twice the 300 asked for since the last one)
    again = scratch(np, "cols", (300,), np.float32)  # allocated at the size needed now
    assert scratch_bytes() == 1200 and not np.shares_memory(small, again)
    for _ in range(7):  # two reviews, each within twice the largest recent use: kept
        scratch(np, "cols", (200,), np.float32)
    assert scratch_bytes() == 1200


def test_a_large_request_is_not_kept():
    big = scratch(np, "cols", (mod.MAX_BYTES // 4 + 1,), np.float32)
    assert big.shape == (mod.MAX_BYTES // 4 + 1,) and scratch_bytes() == 0


def test_reviews_come_further_apart_when_they_drop_what_a_cycle_needs(monkeypatch):
    """A large buffer needed once per cycle of work longer than the review interval (a deep
    model's first layers) is not dropped and allocated again every cycle: the interval of
    that thread's reviews doubles until it spans the cycle."""
    monkeypatch.setattr(mod, "REVIEW_CALLS", 4)
    release_scratch()
    allocations = []
    real_empty = np.empty

    class Counting:  # numpy, with its allocations counted
        dtype = staticmethod(np.dtype)

        @staticmethod
        def empty(shape, dtype):
            allocations.append(shape)
            return real_empty(shape, dtype)

    xp = Counting()
    for cycle in range(8):
        scratch(xp, "cols", (1000,), np.float32)  # the first layer
        for _ in range(11):
            scratch(xp, "cols", (100,), np.float32)  # the others
        if cycle == 5:
            settled = len(allocations)
    assert len(allocations) == settled  # no allocation in the last two cycles
    assert mod._local.pool.interval >= 12
    assert scratch_bytes() == 4000
