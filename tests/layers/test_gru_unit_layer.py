"""fluid.layers.gru_unit: outputs and gradients equal Fluid 1.8.5's (golden data), bad size."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid

DATA = Path(__file__).parent / "data"


def test_gru_unit_equals_fluid_1_8_5():
    spec = importlib.util.spec_from_file_location("g", DATA / "fluid18_gru_unit.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    got = gen.run(fluid)
    golden = np.load(DATA / "fluid18_gru_unit.npz")
    want = [golden[f"arr_{i}"] for i in range(len(golden.files))]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5, err_msg=f"fetch {i}")


def test_size_must_be_a_multiple_of_three():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 6], "float32")
        h = fluid.data("h", [None, 2], "float32")
        with pytest.raises(ValueError, match="gru_unit: size must be a positive multiple of 3"):
            fluid.layers.gru_unit(x, h, 7)
