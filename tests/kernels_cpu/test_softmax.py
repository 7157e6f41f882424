"""softmax along an axis."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(3)


def _ref(X, axis=-1, **_):
    e = np.exp(X - X.max(axis=axis, keepdims=True))
    return {"Out": e / e.sum(axis=axis, keepdims=True)}


CASES = [
    OpCase("softmax", {"X": rng.uniform(-2, 2, (3, 4))}, ref=_ref, grad=["X"], name="last"),
    OpCase(
        "softmax",
        {"X": rng.uniform(-2, 2, (2, 3, 4))},
        {"axis": 1},
        ref=_ref,
        grad=["X"],
        name="axis1",
    ),
    OpCase(
        "softmax",
        {"X": rng.uniform(-2, 2, (2, 3, 2))},
        {"axis": 0},
        ref=_ref,
        grad=["X"],
        name="axis0",
    ),
    OpCase(
        "softmax",
        {"X": rng.uniform(-2, 2, (2, 3, 2))},
        {"axis": -2},
        ref=_ref,
        grad=["X"],
        name="axis-2",
    ),
    OpCase(
        "softmax",
        {"X": np.array([[1000.0, 1001.0, 999.0]], "float32")},
        ref=_ref,
        name="large-logits",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_softmax(case):
    check_case(case)


def test_softmax_axis_out_of_range():
    from oar import fluid

    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        with pytest.raises(ValueError, match="axis 2 is out of range"):
            fluid.layers.softmax(x, axis=2)
