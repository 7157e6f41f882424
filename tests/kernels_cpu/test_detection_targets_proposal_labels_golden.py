"""generate_proposal_labels (use_random=False) reproduces Fluid 1.8.5's samples, labels, targets
and weights with their LoDs (golden data in data/)."""

from pathlib import Path

import pytest
from oar.golden import assert_golden, load_golden, run_golden

DATA = Path(__file__).parent / "data"
golden = load_golden(DATA / "fluid18_proposal_labels.py")


@pytest.fixture(scope="module")
def results():
    return run_golden(golden.build, DATA / "fluid18_proposal_labels.npz")


@pytest.fixture(scope="module")
def cascade_results():
    return run_golden(golden.build_cascade, DATA / "fluid18_cascade_labels.npz")


@pytest.mark.parametrize("name", golden.NAMES)
def test_matches_fluid18(results, name):
    assert_golden(results, golden.NAMES, name, rtol=1e-5, atol=1e-4, lod=True)


@pytest.mark.parametrize("name", golden.CASCADE_NAMES)
def test_cascade_rcnn_matches_fluid18(cascade_results, name):
    assert_golden(cascade_results, golden.CASCADE_NAMES, name, rtol=1e-5, atol=1e-4, lod=True)
