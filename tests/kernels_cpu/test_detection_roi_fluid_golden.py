"""ROI pooling layers and their gradients reproduce Fluid 1.8.5's (golden data in data/)."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.golden import assert_golden, load_golden, run_golden

DATA = Path(__file__).parent / "data"
golden = load_golden(DATA / "fluid18_detection_roi.py")


@pytest.fixture(scope="module")
def results():
    return run_golden(golden.build, DATA / "fluid18_detection_roi.npz")


@pytest.mark.parametrize("name", golden.NAMES)
def test_matches_fluid18(results, name):
    assert_golden(results, golden.NAMES, name, rtol=1e-4, atol=1e-5)


PRROI = np.load(DATA / "fluid18_prroi_grad.npz")


@pytest.mark.parametrize("tag,scale", [("scale1", 1.0), ("scale_half", 0.5)])
def test_prroi_pool_roi_gradient_matches_fluid18(tag, scale):
    x, rois, w = PRROI["x"], PRROI["rois"], PRROI[tag + "_w"]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        xv = fluid.data("x", list(x.shape), "float32")
        xv.stop_gradient = False
        rv = fluid.data("r", [-1, 4], "float32", lod_level=1)
        rv.stop_gradient = False
        y = fluid.layers.prroi_pool(xv, rv, scale, w.shape[2], w.shape[3])
        loss = fluid.layers.reduce_sum(y * fluid.layers.assign(w))
        grads = fluid.gradients([loss], [xv, rv])
    feed = {"x": x, "r": fluid.create_lod_tensor(rois, [[2, 2]], fluid.CPUPlace())}
    out, dx, drois = fluid.Executor(fluid.CPUPlace()).run(main, feed=feed, fetch_list=[y] + grads)
    np.testing.assert_allclose(out, PRROI[tag + "_out"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dx, PRROI[tag + "_dx"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(drois, PRROI[tag + "_drois"], rtol=1e-4, atol=1e-5)
