"""shape, range, linspace and increment vs numpy."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case


def a(v, dt):
    return np.array([v], dt)


CASES = [
    OpCase(
        "shape",
        {"Input": np.zeros((2, 5, 3), "float32")},
        ref=lambda Input: {"Out": np.array([2, 5, 3], "int32")},
    ),
    OpCase(
        "range",
        {"Start": a(1, "int64"), "End": a(10, "int64"), "Step": a(3, "int64")},
        ref=lambda **_: {"Out": np.arange(1, 10, 3)},
    ),
    OpCase(
        "range",
        {"Start": a(1.0, "float32"), "End": a(0.0, "float32"), "Step": a(-0.25, "float32")},
        ref=lambda **_: {"Out": np.arange(1, 0, -0.25, dtype="float32")},
        name="float_down",
    ),
    OpCase(
        "linspace",
        {"Start": a(0.0, "float32"), "Stop": a(1.0, "float32"), "Num": a(5, "int32")},
        ref=lambda **_: {"Out": np.linspace(0, 1, 5, dtype="float32")},
    ),
    OpCase(
        "linspace",
        {"Start": a(2.0, "float64"), "Stop": a(2.0, "float64"), "Num": a(1, "int32")},
        ref=lambda **_: {"Out": np.array([2.0])},
        name="one",
    ),
    OpCase("increment", {"X": a(3, "int64")}, {"step": 2.0}, ref=lambda X, step: {"Out": X + 2}),
    OpCase("increment", {"X": a(0.5, "float32")}, ref=lambda X: {"Out": X + 1}, name="float"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_ranges(case):
    check_case(case)
