"""Collective ops of oar-dist (``c_allreduce_sum`` ...) in a world of one process.

In one process every ring is the identity, which is what these cases check
(with the gradient of ``c_allreduce_sum``); several ranks are tested under
threads and ``mpiexec`` in ``tests/dist/``. Without oar-dist the list is empty.
"""

from __future__ import annotations

import numpy as np
import pytest
from oar.testing import OpCase, check_case

try:
    import oar_dist  # noqa: F401
except ImportError:
    HAVE_DIST = False
else:
    HAVE_DIST = True

R = np.random.RandomState(11)
X = R.rand(3, 4).astype("float64")
Y = R.rand(2, 4).astype("float64")

CASES = (
    [
        OpCase("c_allreduce_sum", {"X": X}, {"ring_id": 0}, lambda X, **a: {"Out": X}, grad=["X"]),
        OpCase("c_allreduce_max", {"X": X}, {}, lambda X, **a: {"Out": X}),
        OpCase("c_allreduce_min", {"X": X}, {}, lambda X, **a: {"Out": X}),
        OpCase("c_allreduce_prod", {"X": X}, {}, lambda X, **a: {"Out": X}),
        OpCase(
            "c_fused_allreduce_sum",
            {"X": [X, Y]},
            {},
            lambda X, **a: {"Out": list(X)},
            outputs={"Out": 2},
        ),
        OpCase("c_broadcast", {"X": X}, {"root": 0}, lambda X, **a: {"Out": X}),
        OpCase("c_allgather", {"X": X}, {"nranks": 1}, lambda X, **a: {"Out": X}),
        OpCase("c_sync_calc_stream", {"X": X}, {}, lambda X, **a: {"Out": X}),
        OpCase(
            "c_sync_comm_stream",
            {"X": [X, Y]},
            {},
            lambda X, **a: {"Out": list(X)},
            outputs={"Out": 2},
        ),
        OpCase(
            "c_gen_nccl_id",
            {},
            {"rank": 0, "other_endpoints": []},
            lambda **a: {"Out": np.array([0, 1], "int64")},
        ),
        OpCase("c_comm_init", {"X": np.array([0, 1], "int64")}, {"nranks": 1, "rank": 0}),
    ]
    if HAVE_DIST
    else []
)


@pytest.mark.skipif(not HAVE_DIST, reason="oar-dist is not installed")
@pytest.mark.parametrize("case", CASES, ids=str)
def test_case(case):
    check_case(case)
