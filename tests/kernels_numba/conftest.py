"""Shared fixtures of the oar-kernels-numba tests."""

from __future__ import annotations

import pytest

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
