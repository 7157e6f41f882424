"""deformable_roi_pooling and its gradients reproduce Fluid 1.8.5's (golden data in data/)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location(
    "fluid18_deformable_roi", DATA / "fluid18_deformable_roi.py"
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
    return got, np.load(DATA / "fluid18_deformable_roi.npz")


@pytest.mark.parametrize("name", golden.NAMES)
def test_matches_fluid18(results, name):
    got, expected = results
    g, e = got[golden.NAMES.index(name)], expected[name]
    assert g.shape == e.shape
    assert g.dtype == e.dtype
    np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
