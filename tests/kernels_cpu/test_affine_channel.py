"""affine_channel on every device, with numeric gradients for X, Scale and Bias, and its
errors (Fluid 1.8.5's numbers are in test_affine_channel_fluid_golden.py)."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

RNG = np.random.RandomState(6)
S, B = RNG.rand(3) + 0.5, RNG.rand(3)
CASES = [
    OpCase(
        "affine_channel",
        {"X": RNG.rand(2, 3, 2, 2), "Scale": S, "Bias": B},
        ref=lambda X, Scale, Bias, **_: {"Out": X * Scale[:, None, None] + Bias[:, None, None]},
        grad=["X", "Scale", "Bias"],
    ),
    OpCase(
        "affine_channel",
        {"X": RNG.rand(2, 2, 3), "Scale": S, "Bias": B},
        {"data_layout": "NHWC"},
        ref=lambda X, Scale, Bias, **_: {"Out": X * Scale + Bias},
        grad=["X", "Scale", "Bias"],
        name="nhwc",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_affine_channel(case):
    check_case(case)


def _build(fn):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        return fn(fluid.layers)


def _x():
    return fluid.data("x", [2, 3, 4, 4], "float32")


BAD = [
    (lambda L: L.affine_channel(_x(), fluid.data("s", [4]), fluid.data("b", [4])), "Scale must be"),
    (lambda L: L.affine_channel(_x(), fluid.data("s", [3]), None), "required"),
    (
        lambda L: L.affine_channel(_x(), fluid.data("s", [3]), fluid.data("b", [3]), "NCWH"),
        "data_layout",
    ),
]


@pytest.mark.parametrize("fn,match", BAD)
def test_bad_input_names_layer_and_line(fn, match):
    with pytest.raises(OarError, match=match) as info:
        _build(fn)
    assert "affine_channel" in str(info.value) and "test_affine_channel.py" in str(info.value)
