"""generate_mask_labels reproduces Fluid 1.8.5's mask ROIs, their indices and the rasterised masks
with their LoDs (golden data in data/)."""

from pathlib import Path

import pytest
from oar.golden import assert_golden, load_golden, run_golden

DATA = Path(__file__).parent / "data"
golden = load_golden(DATA / "fluid18_mask_labels.py")


@pytest.fixture(scope="module")
def results():
    return run_golden(golden.build, DATA / "fluid18_mask_labels.npz")


@pytest.mark.parametrize("name", golden.NAMES)
def test_matches_fluid18(results, name):
    assert_golden(results, golden.NAMES, name, rtol=1e-5, atol=1e-4, lod=True)
