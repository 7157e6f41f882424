"""Data pipeline: PyReader overlapping reading with training, and xmap_readers' speedup.

``pyreader_overlap``: one step() = one epoch of N_BATCHES training steps whose
data comes from a reader that costs R per batch (an I/O-like wait: disk or
network), with R set equal to the measured step cost C. The floor ("numpy"
column) is n·max(R, C): the same N_BATCHES steps on in-memory data, then a
wait for whatever is left of n·R (C drifts with machine load, R is fixed
once). "sync" feeds by hand from the same reader: n·(R + C). The epoch
includes the pipeline's fill (the first batch's R), as a real epoch does.
Target: oar (non-iterable PyReader) / floor <= 1.15.

``xmap_numpy_mapper`` / ``xmap_python_mapper``: one step() = mapping 24
samples with a CPU-bound mapper; "oar" is ``xmap_readers`` with 2 worker
threads, the "numpy" column the same mapper applied serially
(``map_readers``). oar/numpy = 1 / speedup. The numpy mapper releases the GIL
(BLAS), so threads can overlap; the pure-Python mapper holds it (no speedup
is possible with threads, which is what Paddle's xmap_readers uses too).
"""

from __future__ import annotations

import time

import numpy as np
from benchlib import Benchmark, Unavailable

BATCH, IN, HIDDEN, CLASSES = 256, 784, 512, 10
N_BATCHES = 32
_rng = np.random.default_rng(0)
XS = [_rng.uniform(-1, 1, (BATCH, IN)).astype(np.float32) for _ in range(N_BATCHES)]
YS = [_rng.integers(0, CLASSES, (BATCH, 1)).astype(np.int64) for _ in range(N_BATCHES)]
W1 = _rng.uniform(-0.05, 0.05, (IN, HIDDEN)).astype(np.float32)
W2 = _rng.uniform(-0.05, 0.05, (HIDDEN, CLASSES)).astype(np.float32)

_cost: dict = {}


def _fluid():
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    try:
        fluid.io.PyReader  # noqa: B018 - needs oar-data
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    return fluid


def _build(with_reader: bool, iterable: bool = False):
    fluid = _fluid()
    init = fluid.initializer.NumpyArrayInitializer
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data(name="x", shape=[IN], dtype="float32")
        y = fluid.layers.data(name="y", shape=[1], dtype="int64")
        reader = (
            fluid.io.PyReader(feed_list=[x, y], capacity=4, iterable=iterable)
            if with_reader
            else None
        )
        h = fluid.layers.fc(x, HIDDEN, act="relu", param_attr=fluid.ParamAttr(initializer=init(W1)))
        p = fluid.layers.fc(
            h, CLASSES, act="softmax", param_attr=fluid.ParamAttr(initializer=init(W2))
        )
        loss = fluid.layers.mean(fluid.layers.cross_entropy(p, y))
        fluid.optimizer.SGD(0.01).minimize(loss, startup)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    return fluid, main, exe, scope, loss, reader


def step_cost() -> float:
    """C: the median seconds of one training step with in-memory data (measured once)."""
    if "C" not in _cost:
        fluid, main, exe, scope, loss, _ = _build(False)
        feed = {"x": XS[0], "y": YS[0]}
        for _ in range(5):
            exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
        times = []
        for _ in range(15):
            t0 = time.perf_counter()
            exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
            times.append(time.perf_counter() - t0)
        _cost["C"] = float(np.median(times))
    return _cost["C"]


def slow_batches():
    """The reader: R = C of waiting (I/O) per batch, then the batch."""
    r = step_cost()
    for x, y in zip(XS, YS):
        time.sleep(r)
        yield x, y


def floor_epoch():
    """n*max(R, C): the n steps on in-memory data, then waiting out the rest of n*R if C < R."""
    fluid, main, exe, scope, loss, _ = _build(False)
    reading = step_cost() * N_BATCHES

    def step():
        out = None
        t0 = time.perf_counter()
        for x, y in zip(XS, YS):
            out = exe.run(main, feed={"x": x, "y": y}, fetch_list=[loss], scope=scope)[0]
        left = reading - (time.perf_counter() - t0)
        if left > 0:
            time.sleep(left)
        return out

    return step


def sync_epoch():
    fluid, main, exe, scope, loss, _ = _build(False)

    def step():
        out = None
        for x, y in slow_batches():
            out = exe.run(main, feed={"x": x, "y": y}, fetch_list=[loss], scope=scope)[0]
        return out

    return step


def pyreader_epoch():
    fluid, main, exe, scope, loss, reader = _build(True)
    reader.decorate_batch_generator(slow_batches)

    def step():
        out = None
        reader.start()
        try:
            while True:
                out = exe.run(main, fetch_list=[loss], scope=scope)[0]
        except fluid.core.EOFException:
            reader.reset()
        return out

    return step


def pyreader_iterable_epoch():
    fluid, main, exe, scope, loss, reader = _build(True, iterable=True)
    reader.decorate_batch_generator(slow_batches, places=fluid.CPUPlace())

    def step():
        out = None
        for data in reader():
            out = exe.run(main, feed=data, fetch_list=[loss], scope=scope)[0]
        return out

    return step


# --- xmap_readers ---------------------------------------------------------------------------------
N_SAMPLES = 24
_M = _rng.uniform(-1, 1, (384, 384)).astype(np.float32)


def numpy_mapper(i):
    a = _M * (1 + i * 1e-3)
    for _ in range(4):
        a = np.tanh(a @ a.T * 1e-2)
    return float(a.sum())


def python_mapper(i):
    s = 0
    for k in range(6000):
        s += (k * i) % 7
    return s


def _samples():
    return iter(range(N_SAMPLES))


def _xmap(mapper):
    def factory():
        try:
            import oar

            R = oar.reader
        except ImportError as exc:
            raise Unavailable(str(exc)) from None

        def step():
            return sorted(R.xmap_readers(mapper, _samples, 2, 8, order=True)())

        return step

    return factory


def _serial(mapper):
    def factory():
        try:
            import oar

            R = oar.reader
        except ImportError as exc:
            raise Unavailable(str(exc)) from None

        def step():
            return sorted(R.map_readers(mapper, _samples)())

        return step

    return factory


BENCHMARKS = [
    Benchmark(
        name="pyreader_overlap",
        description=f"epoch of {N_BATCHES} MLP steps (batch {BATCH}, 784-512-10) fed by a reader costing "
        f"R = C per batch; numpy column = in-memory floor n*max(R, C)",
        contenders={
            "oar": pyreader_epoch,
            "numpy": floor_epoch,
            "sync": sync_epoch,
            "oar_iterable": pyreader_iterable_epoch,
        },
        targets={"oar/numpy": 1.15},
        check=None,
    ),
    Benchmark(
        name="xmap_numpy_mapper",
        description=f"{N_SAMPLES} samples through a BLAS-bound mapper: xmap_readers(2 threads) vs serial",
        contenders={"oar": _xmap(numpy_mapper), "numpy": _serial(numpy_mapper)},
        check=None,
    ),
    Benchmark(
        name="xmap_python_mapper",
        description=f"{N_SAMPLES} samples through a pure-Python mapper (holds the GIL): xmap(2) vs serial",
        contenders={"oar": _xmap(python_mapper), "numpy": _serial(python_mapper)},
        check=None,
    ),
]
