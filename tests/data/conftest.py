"""Shared fixtures for the data plugin tests."""

import multiprocessing
import threading
import time

import pytest


def _extra_threads(before):
    return [t for t in threading.enumerate() if t not in before and t.is_alive()]


@pytest.fixture
def no_leaks():
    """Fails the test if it leaves a thread or a child process behind."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 3.0
    while (
        _extra_threads(before) or multiprocessing.active_children()
    ) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _extra_threads(before) == []
    assert multiprocessing.active_children() == []
