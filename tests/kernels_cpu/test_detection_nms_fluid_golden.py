"""NMS layers reproduce Fluid 1.8.5's outputs and LoDs (golden data in data/)."""

from pathlib import Path

import pytest
from oar.golden import assert_golden, load_golden, run_golden

DATA = Path(__file__).parent / "data"
golden = load_golden(DATA / "fluid18_detection_nms.py")
NAMES = golden.NAMES


@pytest.fixture(scope="module")
def results():
    return run_golden(golden.build, DATA / "fluid18_detection_nms.npz")


@pytest.mark.parametrize("name", NAMES)
def test_matches_fluid18(results, name):
    assert_golden(results, NAMES, name, rtol=1e-5, atol=1e-6, lod=True)
