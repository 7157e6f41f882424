"""Ctrl-C in a notebook: a loop over a loader interrupted by KeyboardInterrupt leaves no thread
running, even though the notebook keeps the traceback (and so the loop's frame) alive."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

pytest.importorskip("oar_data")

from oar import fluid


def _loader():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.data("x", [None, 2], "float32")
        loader = fluid.io.DataLoader.from_generator(feed_list=[x], capacity=2, iterable=True)

    def endless():
        while True:
            yield [np.ones((4, 2), "float32")]

    loader.set_batch_generator(endless, places=fluid.CPUPlace())
    return loader


def test_keyboard_interrupt_in_the_loop_leaves_no_thread(monkeypatch):
    before = set(threading.enumerate())
    loader = _loader()
    try:
        for i, _batch in enumerate(loader()):
            if i == 3:
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        # what IPython/Jupyter keep after an interrupted cell
        monkeypatch.setattr(sys, "last_traceback", sys.exc_info()[2], raising=False)
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        left = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        if not left:
            break
        time.sleep(0.05)
    assert not left, left
