"""CPU math threads: set, limited per data-parallel place, and results independent of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from oar import cpu_threads
from oar.api import (
    cpu_math_library_num_threads,
    limit_cpu_math_threads,
    set_cpu_math_library_num_threads,
)


@pytest.fixture
def restore_threads():
    setting = cpu_threads._setting
    blas = cpu_threads.blas_num_threads()
    yield
    cpu_threads._setting = setting
    if blas:
        cpu_threads._apply(blas)


def test_set_and_limit(restore_threads):
    set_cpu_math_library_num_threads(2)
    assert cpu_math_library_num_threads() == 2
    with limit_cpu_math_threads(1) as n:
        assert n == 1 and cpu_math_library_num_threads() == 1
        if cpu_threads.blas_num_threads() is not None:  # numpy's OpenBLAS was found
            assert cpu_threads.blas_num_threads() == 1
        with limit_cpu_math_threads(8) as inner:
            assert inner == 1  # a limit never raises the one in force
    assert cpu_math_library_num_threads() == 2
    if cpu_threads.blas_num_threads() is not None:
        assert cpu_threads.blas_num_threads() == 2
    with pytest.raises(ValueError, match="positive int"):
        set_cpu_math_library_num_threads(0)


def test_with_one_blas_thread(restore_threads):
    set_cpu_math_library_num_threads(2)
    seen = []
    assert cpu_threads.with_one_blas_thread(lambda a, b: seen.append(a + b) or 7, 1, 2) == 7
    assert seen == [3]
    if cpu_threads.blas_num_threads() is None:
        pytest.skip("numpy's OpenBLAS was not found")
    inside = cpu_threads.with_one_blas_thread(cpu_threads.blas_num_threads)
    assert inside == 1 and cpu_threads.blas_num_threads() == 2
    with pytest.raises(ZeroDivisionError):  # restored when the call raises
        cpu_threads.with_one_blas_thread(lambda: 1 / 0)
    assert cpu_threads.blas_num_threads() == 2
    import threading  # other threads leave the process-wide count alone

    got = []
    t = threading.Thread(
        target=lambda: got.append(cpu_threads.with_one_blas_thread(cpu_threads.blas_num_threads))
    )
    t.start()
    t.join(timeout=30)
    assert got == [2]


def test_environment_default(monkeypatch):
    monkeypatch.setattr(cpu_threads, "_setting", None)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert cpu_math_library_num_threads() == 3
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert cpu_math_library_num_threads() == cpu_threads.cpu_count()


SCRIPT = """
    import json, sys
    import numpy as np
    from oar import fluid
    from oar.api import set_cpu_math_library_num_threads

    set_cpu_math_library_num_threads(int(sys.argv[1]))
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 7
    with fluid.program_guard(main, start):
        img = fluid.data("img", [None, 1, 12, 12], "float32")
        y = fluid.data("y", [None, 1], "int64")
        c = fluid.layers.conv2d(img, 8, 5, act="relu")
        p = fluid.layers.pool2d(c, 2, "max", 2)
        h = fluid.layers.fc(p, 300, act="relu")
        pred = fluid.layers.fc(h, 10, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, y))
        fluid.optimizer.Adam(0.01).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    rng = np.random.default_rng(0)
    feed = {"img": rng.standard_normal((64, 1, 12, 12)).astype("float32"),
            "y": rng.integers(0, 10, (64, 1))}
    out = [exe.run(main, feed=feed, fetch_list=[loss])[0].tolist() for _ in range(3)]
    print(json.dumps(out))
"""


def test_same_results_with_one_and_two_threads():
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS",)}
    runs = []
    for n in ("1", "2"):
        res = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(SCRIPT), n],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert res.returncode == 0, res.stderr
        runs.append(json.loads(res.stdout.strip().splitlines()[-1]))
    np.testing.assert_array_equal(runs[0], runs[1])  # bit for bit


SCIPY_SCRIPT = """
    import ctypes, sys
    import numpy as np
    from oar import cpu_threads
    from oar.api import set_cpu_math_library_num_threads

    if sys.argv[1] == "ctypes":
        cpu_threads._controllers[:] = [None]  # OpenBLAS's own calls, threadpoolctl or not
    set_cpu_math_library_num_threads(2)  # first scan: numpy's OpenBLAS only
    import scipy.linalg  # loads SciPy's own OpenBLAS (numba's np.dot calls it)

    paths = {l.split()[-1] for l in open("/proc/self/maps") if "openblas" in l.lower()}
    scipy_lib = [ctypes.CDLL(p) for p in paths if "scipy.libs" in p]
    if not scipy_lib:
        print("no-scipy-openblas")
        sys.exit(0)
    get = scipy_lib[0].scipy_openblas_get_num_threads
    seen = []
    for n in (1, 2, 1):
        set_cpu_math_library_num_threads(n)
        seen.append((cpu_threads.blas_num_threads(), get()))
    print(seen)
"""


@pytest.mark.parametrize("way", ["ctypes", "threadpoolctl"])
def test_every_openblas_follows_the_setting_scipys_too(way):
    """numba's compiled np.dot runs on SciPy's OpenBLAS, a second library: through OpenBLAS's
    own calls or threadpoolctl's, setting the threads must reach it too, even when SciPy
    loads late."""
    pytest.importorskip("scipy")
    if way == "threadpoolctl":
        pytest.importorskip("threadpoolctl")
    res = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCIPY_SCRIPT), way],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    out = res.stdout.strip()
    if out == "no-scipy-openblas":
        pytest.skip("this SciPy does not bundle its own OpenBLAS")
    assert out == "[(1, 1), (2, 2), (1, 1)]"


def test_a_limit_does_not_rescan_the_libraries(restore_threads, monkeypatch):
    """threadpoolctl finds the BLAS libraries once: a scan per ``limit_cpu_math_threads``
    (around every pool hand-off of the kernels) cost about 1 ms each."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    scans = []
    real = threadpoolctl.ThreadpoolController

    class Counting(real):
        def __init__(self, *a, **k):
            scans.append(1)
            super().__init__(*a, **k)

    monkeypatch.setattr(threadpoolctl, "ThreadpoolController", Counting)
    monkeypatch.setattr(cpu_threads, "_controllers", [])
    set_cpu_math_library_num_threads(2)
    for _ in range(5):
        with limit_cpu_math_threads(1):
            if cpu_threads.blas_num_threads() is not None:
                assert cpu_threads.blas_num_threads() == 1
    assert len(scans) <= 2  # once, and again at most once after scipy.linalg loads
    if cpu_threads.blas_num_threads() is not None:
        assert cpu_threads.blas_num_threads() == 2
