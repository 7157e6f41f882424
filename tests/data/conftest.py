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


@pytest.fixture
def home(tmp_path, monkeypatch):
    """An empty dataset cache in ``tmp_path`` (``OAR_DATA_HOME``), downloads refused."""
    monkeypatch.setenv("OAR_DATA_HOME", str(tmp_path))
    monkeypatch.setenv("OAR_DATA_OFFLINE", "1")
    return tmp_path
