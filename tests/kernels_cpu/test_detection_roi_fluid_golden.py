"""ROI pooling layers and their gradients reproduce Fluid 1.8.5's (golden data in data/)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location(
    "fluid18_detection_roi", DATA / "fluid18_detection_roi.py"
)
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


@pytest.fixture(scope="module")
def results():
    with fluid.unique_name.guard():
        main, startup, feed, outs = golden.build(fluid)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    got = exe.run(main, feed=feed, fetch_list=outs, scope=scope)
    return got, np.load(DATA / "fluid18_detection_roi.npz")


@pytest.mark.parametrize("name", golden.NAMES)
def test_matches_fluid18(results, name):
    got, expected = results
    g, e = got[golden.NAMES.index(name)], expected[name]
    assert g.shape == e.shape
    assert g.dtype == e.dtype
    np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


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
