"""similarity_focus against Fluid 1.8.5's masks."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

G = np.load(Path(__file__).parent / "data" / "fluid18_similarity_focus.npz")
PARAMS = [(1, [0], "out_1_1"), (1, [0, 2], "out_1_2"), (2, [1], "out_2_1"), (3, [0, 3], "out_3_2")]
CASES = [
    OpCase(
        "similarity_focus",
        {"X": G["x"]},
        {"axis": axis, "indexes": idx},
        ref=lambda X, key=key, **_: {"Out": G[key]},
        name=key,
    )
    for axis, idx, key in PARAMS
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_similarity_focus(case):
    check_case(case)


def test_bad_input_is_refused():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [2, 3, 3, 4], "float32")
        with pytest.raises(OarError, match="axis"):
            fluid.layers.similarity_focus(x, 0, [0])
        with pytest.raises(OarError, match="indexes"):
            fluid.layers.similarity_focus(x, 1, [5])
