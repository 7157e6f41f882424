"""NMS layers reproduce Fluid 1.8.5's outputs and LoDs (golden data in data/)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location(
    "fluid18_detection_nms", DATA / "fluid18_detection_nms.py"
)
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)
NAMES = golden.NAMES


@pytest.fixture(scope="module")
def results():
    with fluid.unique_name.guard():
        main, startup, feed, outs = golden.build(fluid)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    got = exe.run(main, feed=feed, fetch_list=outs, scope=scope, return_numpy=False)
    return got, np.load(DATA / "fluid18_detection_nms.npz")


@pytest.mark.parametrize("name", NAMES)
def test_matches_fluid18(results, name):
    got, expected = results
    t = got[NAMES.index(name)]
    g, e = np.array(t), expected[name]
    assert g.shape == e.shape
    assert g.dtype == e.dtype
    np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    lod = t.lod()[0] if t.lod() else []
    assert list(lod) == list(expected[name + "_lod"])
