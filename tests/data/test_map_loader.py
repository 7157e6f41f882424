"""Fluid 1.8's DataLoader(dataset, ...): Dataset, BatchSampler, default_collate_fn, workers."""

from __future__ import annotations

import functools
import multiprocessing
import os
import signal
import sys
import textwrap
import time

import numpy as np
import pytest
from oar import fluid
from oar_data.workers import WorkerError


class Squares(fluid.io.Dataset):
    def __init__(self, n=7, kill_at=None, fail_at=None):
        self.n, self.kill_at, self.fail_at = n, kill_at, fail_at

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if i == self.fail_at:
            raise KeyError(f"sample {i} is missing")
        return np.full([2], i * i, "float32"), np.array([i], "int64")


def _static_batches(dataset, **kwargs):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.data("x", [None, 2])
        y = fluid.data("y", [None, 1], "int64")
        loader = fluid.io.DataLoader(
            dataset, feed_list=[x, y], places=fluid.cpu_places(1), **kwargs
        )
    return loader, [(np.asarray(d[0]["x"]), np.asarray(d[0]["y"])) for d in loader()]


def _no_workers_left():
    deadline = time.monotonic() + 5
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    return multiprocessing.active_children() == []


def test_batch_sampler_and_collate_match_fluid():
    """Fluid 1.8.5: BatchSampler(D(5), batch_size=2) -> [[0, 1], [2, 3], [4]], len 3;
    BatchSampler(indices=[4, 3, 2, 1], batch_size=3) -> [[4, 3, 2], [1]]; collate of
    [(1, 2.0), (3, 4.0)] -> [array([1, 3]), array([2., 4.])]."""
    assert list(fluid.io.BatchSampler(Squares(5), batch_size=2)) == [[0, 1], [2, 3], [4]]
    assert len(fluid.io.BatchSampler(Squares(5), batch_size=2)) == 3
    assert len(fluid.io.BatchSampler(Squares(5), batch_size=2, drop_last=True)) == 2
    assert list(fluid.io.BatchSampler(indices=[4, 3, 2, 1], batch_size=3)) == [[4, 3, 2], [1]]
    shuffled = [i for b in fluid.io.BatchSampler(Squares(9), shuffle=True, batch_size=4) for i in b]
    assert sorted(shuffled) == list(range(9))
    with pytest.raises(ValueError, match="both dataset and indices"):
        fluid.io.BatchSampler(Squares(), indices=[1])
    a, b = fluid.io.default_collate_fn([(1, 2.0), (3, 4.0)])
    np.testing.assert_array_equal(a, [1, 3])
    np.testing.assert_array_equal(b, [2.0, 4.0])
    x, y = fluid.io.default_collate_fn([Squares()[i] for i in range(3)])
    assert x.shape == (3, 2) and y.shape == (3, 1) and y.dtype == np.int64
    with pytest.raises(ValueError, match="different shapes"):
        fluid.io.default_collate_fn([(np.zeros(2),), (np.zeros(3),)])


@pytest.mark.parametrize("shared", [True, False], ids=["shm", "pickled"])
def test_two_workers_equal_no_workers_batch_for_batch(shared):
    loader, serial = _static_batches(Squares(), batch_size=2)
    assert len(loader) == 4
    _, parallel = _static_batches(Squares(), batch_size=2, num_workers=2, use_shared_memory=shared)
    assert len(serial) == len(parallel) == 4
    for (x0, y0), (x1, y1) in zip(serial, parallel, strict=True):
        np.testing.assert_array_equal(x0, x1)
        np.testing.assert_array_equal(y0, y1)
    np.testing.assert_array_equal(serial[-1][0], [[36.0, 36.0]])
    assert _no_workers_left()


def test_killed_worker_gives_a_clear_error_and_no_leaked_process():
    with pytest.raises(WorkerError, match=r"worker \d \(pid \d+\) exited unexpectedly.*signal"):
        _static_batches(Squares(40, kill_at=5), batch_size=2, num_workers=2)
    assert _no_workers_left()


def test_dataset_errors_come_back_with_the_worker_traceback():
    with pytest.raises(WorkerError, match=r"(?s)failed in batch 1.*KeyError.*sample 3 is missing"):
        _static_batches(Squares(fail_at=3), batch_size=2, num_workers=2)
    assert _no_workers_left()


def test_breaking_out_stops_the_workers():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.data("x", [None, 2])
        y = fluid.data("y", [None, 1], "int64")
        loader = fluid.io.DataLoader(
            Squares(200), feed_list=[x, y], places=fluid.cpu_places(1), num_workers=2
        )
    for i, _ in enumerate(loader()):
        if i == 2:
            break
    del loader
    assert _no_workers_left()


def _two_worker_loader(worker_init_fn):
    """Squares(5) in dygraph batches of 3, on two worker processes."""
    return fluid.io.DataLoader(
        Squares(5),
        places=fluid.CPUPlace(),
        return_list=True,
        batch_size=3,
        num_workers=2,
        worker_init_fn=worker_init_fn,
    )


def test_an_unpicklable_worker_init_fn_is_named_with_the_fix(monkeypatch):
    """forkserver / spawn (the default from Python 3.12) pickle what the workers get."""
    monkeypatch.setenv("OAR_DATALOADER_START_METHOD", "spawn")

    def init(worker_id):  # a local function: not picklable
        pass

    with fluid.dygraph.guard():
        loader = _two_worker_loader(init)
        with pytest.raises(WorkerError, match=r"start with 'spawn'.*cannot be pickled.*module lev"):
            next(iter(loader))


def _mark_worker(marks, worker_id):
    (marks / str(worker_id)).write_text("ok")


def test_dygraph_lists_of_variables_and_worker_init_fn(tmp_path):
    marks = tmp_path / "init"
    marks.mkdir()
    init = functools.partial(_mark_worker, marks)  # picklable: forkserver starts (3.12+) too

    with fluid.dygraph.guard():
        shapes = [tuple(batch[0].shape) for batch in _two_worker_loader(init)]
    assert shapes == [(3, 2), (2, 2)]
    assert sorted(os.listdir(marks)) == ["0", "1"]


def test_spawned_workers(tmp_path, monkeypatch):
    """With spawn, the dataset travels by pickle: a class from an importable module."""
    (tmp_path / "spawn_ds.py").write_text(
        textwrap.dedent(
            """
            import numpy as np
            from oar import fluid

            class Ramp(fluid.io.Dataset):
                def __len__(self):
                    return 5

                def __getitem__(self, i):
                    return np.full([2], i, "float32"), np.array([i], "int64")
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("OAR_DATALOADER_START_METHOD", "spawn")
    sys.modules.pop("spawn_ds", None)
    from spawn_ds import Ramp

    _, batches = _static_batches(Ramp(), batch_size=2, num_workers=2)
    np.testing.assert_array_equal(np.concatenate([b[0] for b in batches])[:, 0], np.arange(5))
    assert _no_workers_left()


def test_bad_arguments():
    with pytest.raises(TypeError, match="map-style dataset"):
        fluid.io.DataLoader(iter([1, 2]), places=fluid.cpu_places(1))
    with pytest.raises(ValueError, match="num_workers"):
        _static_batches(Squares(), num_workers=-1)
    with pytest.raises(ValueError, match="batch_sampler is given"):
        _static_batches(Squares(), batch_sampler=fluid.io.BatchSampler(Squares()), batch_size=4)
