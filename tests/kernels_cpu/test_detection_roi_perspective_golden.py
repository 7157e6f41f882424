"""roi_perspective_transform (output, mask, matrices, input gradient) reproduces Fluid 1.8.5's
(golden data in data/)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location(
    "fluid18_roi_perspective", DATA / "fluid18_roi_perspective.py"
)
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)
NAMES = golden.NAMES[:5]  # Fluid 1.8.5's layer returns out, mask and the matrices


@pytest.fixture(scope="module")
def results():
    with fluid.unique_name.guard():
        main, startup, feed, outs = golden.build(fluid)
    exe = fluid.Executor(fluid.CPUPlace())
    got = exe.run(main, feed=feed, fetch_list=outs, scope=fluid.Scope())
    return got, np.load(DATA / "fluid18_roi_perspective.npz")


@pytest.mark.parametrize("name", NAMES)
def test_matches_fluid18(results, name):
    got, expected = results
    g, e = got[NAMES.index(name)], expected[name]
    assert g.shape == e.shape and g.dtype == e.dtype
    np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
