"""yolov3_loss and its gradient reproduce Fluid 1.8.5's (golden data in data/).

Where two ground-truth boxes of an image fall on the same cell and anchor (image 0, anchor 1,
cell (2, 2) of the second head), Fluid 1.8.5 adds both to the loss but keeps only one in the
gradient; oar's gradient is the loss's (test_detection_yolo.py checks it numerically).
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location(
    "fluid18_detection_yolo", DATA / "fluid18_detection_yolo.py"
)
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


@pytest.fixture(scope="module")
def results():
    with fluid.unique_name.guard():
        main, startup, feed, outs = golden.build(fluid)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    got = exe.run(main, feed=feed, fetch_list=outs, scope=scope)
    return got, np.load(DATA / "fluid18_detection_yolo.npz")


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
