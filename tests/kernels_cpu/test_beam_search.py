"""gather_tree: Fluid 1.8.5's documented example, and random trees against a loop."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(71)


def _ref(Ids, Parents):
    steps, batch, beam = Ids.shape
    out = np.empty_like(Ids)
    for b in range(batch):
        for k in range(beam):
            parent = k
            for t in range(steps - 1, -1, -1):
                out[t, b, k] = Ids[t, b, parent]
                parent = Parents[t, b, parent]
    return {"Out": out}


_IDS = np.array([[[2, 2], [6, 1]], [[3, 9], [6, 1]], [[0, 1], [9, 0]]], np.int64)
_PARENTS = np.array([[[0, 0], [1, 1]], [[1, 0], [1, 0]], [[0, 0], [0, 1]]], np.int64)
CASES = [
    OpCase(
        "gather_tree",
        {"Ids": _IDS, "Parents": _PARENTS},
        # Fluid 1.8.5 gives this for its documented example
        ref=lambda Ids, Parents: {
            "Out": np.array([[[2, 2], [1, 6]], [[3, 3], [6, 1]], [[0, 1], [9, 0]]])
        },
        name="fluid-example",
    ),
    OpCase(
        "gather_tree",
        {"Ids": rng.integers(0, 50, (5, 3, 4)), "Parents": rng.integers(0, 4, (5, 3, 4))},
        ref=_ref,
        name="random",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_beam_search(case):
    check_case(case)
