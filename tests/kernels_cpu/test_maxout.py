"""maxout: forward and gradient, NCHW and NHWC, and its shape errors."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(5)


def ref(X, groups, axis):
    axis = axis % 4
    shape = X.shape[:axis] + (X.shape[axis] // groups, groups) + X.shape[axis + 1 :]
    return {"Out": X.reshape(shape).max(axis=axis + 1)}


CASES = [
    OpCase(
        "maxout",
        {"X": rng.permutation(48).reshape(1, 6, 2, 4) / 10.0},
        {"groups": 2, "axis": 1},
        ref=ref,
        grad=["X"],
        name="nchw",
    ),
    OpCase(
        "maxout",
        {"X": rng.permutation(48).reshape(1, 2, 4, 6) / 10.0},
        {"groups": 3, "axis": -1},
        ref=ref,
        grad=["X"],
        name="nhwc",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_maxout(case):
    check_case(case)


def test_maxout_groups_must_divide_channels():
    x = fluid.layers.data("x", [5, 4, 4])
    with pytest.raises(ValueError, match="not divisible by groups=2"):
        fluid.layers.maxout(x, groups=2)
