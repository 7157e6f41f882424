"""roi_perspective_transform (output, mask, matrices, input gradient) reproduces Fluid 1.8.5's
(golden data in data/)."""

from pathlib import Path

import pytest
from oar.golden import assert_golden, load_golden, run_golden

DATA = Path(__file__).parent / "data"
golden = load_golden(DATA / "fluid18_roi_perspective.py")
NAMES = golden.NAMES[:5]  # Fluid 1.8.5's layer returns out, mask and the matrices


@pytest.fixture(scope="module")
def results():
    return run_golden(golden.build, DATA / "fluid18_roi_perspective.npz")


@pytest.mark.parametrize("name", NAMES)
def test_matches_fluid18(results, name):
    assert_golden(results, NAMES, name, rtol=1e-4, atol=1e-5)
