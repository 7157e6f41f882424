"""generate_mask_labels reproduces Fluid 1.8.5's mask ROIs, their indices and the rasterised masks
with their LoDs (golden data in data/)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location(
    "fluid18_mask_labels", DATA / "fluid18_mask_labels.py"
)
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


@pytest.fixture(scope="module")
def results():
    with fluid.unique_name.guard():
        main, startup, feed, outs = golden.build(fluid)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    got = exe.run(main, feed=feed, fetch_list=outs, scope=scope, return_numpy=False)
    return got, np.load(DATA / "fluid18_mask_labels.npz")


@pytest.mark.parametrize("name", golden.NAMES)
def test_matches_fluid18(results, name):
    got, expected = results
    t = got[golden.NAMES.index(name)]
    g, e = np.array(t), expected[name]
    if e.size == 0:  # Fluid fetches an empty level as a shapeless float64 tensor
        assert g.size == 0
    else:
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-4)
    lod = t.lod()[-1] if hasattr(t, "lod") and t.lod() else []
    assert list(lod) == list(expected[name + "_lod"])
