"""yolov3_loss and its gradient reproduce Fluid 1.8.5's (golden data in data/).

Where two ground-truth boxes of an image fall on the same cell and anchor (image 0, anchor 1,
cell (2, 2) of the second head), Fluid 1.8.5 adds both to the loss but keeps only one in the
gradient; oar's gradient is the loss's (test_detection_yolo.py checks it numerically).
"""

from pathlib import Path

import numpy as np
import pytest
from oar.golden import load_golden, run_golden

DATA = Path(__file__).parent / "data"
golden = load_golden(DATA / "fluid18_detection_yolo.py")


@pytest.fixture(scope="module")
def results():
    got, expected = run_golden(golden.build, DATA / "fluid18_detection_yolo.npz")
    return [np.array(g) for g in got], expected


@pytest.mark.parametrize("name", golden.NAMES)
def test_matches_fluid18(results, name):
    got, expected = results
    g, e = got[golden.NAMES.index(name)], expected[name]
    assert g.shape == e.shape
    assert g.dtype == e.dtype
    if name == "grad_score_nosmooth":
        g, e = g.copy(), e.copy()
        g[0, 8:16, 2, 2] = e[0, 8:16, 2, 2] = 0  # the shared cell (see above)
    np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
