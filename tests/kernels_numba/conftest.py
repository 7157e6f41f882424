"""Shared fixtures of the oar-kernels-numba tests."""

from __future__ import annotations

import os
import sys

import pytest

# the conv tests import their shared set-up by name (numba_conv_helpers.py, next to this file)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

#: the parallel threshold these tests run with: oar-kernels-numba's default (2M elements,
#: where parallel loops start to pay on a 2-core machine) would make every "above the
#: threshold" case allocate megabytes; 64k keeps both twins exercised at small sizes
TEST_PARALLEL_MIN = 1 << 16

try:
    from oar_kernels_numba import _jit
except ImportError:  # numba missing: the tests skip themselves
    pass
else:
    _jit.PARALLEL_MIN = TEST_PARALLEL_MIN


@pytest.fixture
def numba_pair():
    """``pair(op_type, dtype)``: (oar-kernels-numba's kernel, the kernel it overrides)."""
    from oar.api import registries
    from oar_kernels_numba.plugin import PRIORITY

    def pair(op_type: str, dtype: str = "float32"):
        kernels = registries().kernels
        mine = kernels.lookup(op_type, "cpu", dtype)
        below = kernels.lookup_below(op_type, "cpu", dtype, PRIORITY)
        assert mine.plugin == "kernels_numba", f"{op_type}: {mine.plugin}'s kernel wins"
        assert below is not None and below.plugin == "kernels_cpu"
        return mine.kernel, below.kernel

    return pair


def _counted(real, seen: dict, key: str):
    def counted(*a, **k):
        seen[key] += 1
        return real(*a, **k)

    return counted


@pytest.fixture
def count_calls(monkeypatch):
    """``count(module, key=name, ...)``: wraps ``module.name`` so that each call adds one to
    ``counts[key]``; returns ``counts``."""

    def count(module, **names):
        seen = dict.fromkeys(names, 0)
        for key, name in names.items():
            monkeypatch.setattr(module, name, _counted(getattr(module, name), seen, key))
        return seen

    return count


@pytest.fixture
def conv_same_at_any_thread_count(numba_pair, monkeypatch):
    """``check(x, w, dy, attrs)``: conv2d and both gradients by oar-kernels-numba at 1, 2 and 3
    pool threads, bit for bit the same."""
    import numpy as np
    from oar import cpu_pool

    def check(x, w, dy, attrs):
        mine, _ = numba_pair("conv2d", x.dtype.name)
        gmine, _ = numba_pair("conv2d_grad", x.dtype.name)
        both = frozenset({"Input@GRAD", "Filter@GRAD"})
        results = []
        for threads in (1, 2, 3):
            monkeypatch.setattr(cpu_pool, "parallel_threads", lambda t=threads: t)
            y = mine({"Input": x, "Filter": w}, attrs)["Output"]
            g = gmine({"Input": x, "Filter": w, "Output@GRAD": dy}, attrs, both)
            results.append((y, g["Input@GRAD"], g["Filter@GRAD"]))
        for other in results[1:]:
            for a, b in zip(results[0], other):
                np.testing.assert_array_equal(a, b)

    return check
