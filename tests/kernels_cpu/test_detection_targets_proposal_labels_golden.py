"""generate_proposal_labels (use_random=False) reproduces Fluid 1.8.5's samples, labels, targets
and weights with their LoDs (golden data in data/)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location(
    "fluid18_proposal_labels", DATA / "fluid18_proposal_labels.py"
)
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


def _run(build, filename):
    with fluid.unique_name.guard():
        main, startup, feed, outs = build(fluid)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    got = exe.run(main, feed=feed, fetch_list=outs, scope=scope, return_numpy=False)
    return got, np.load(DATA / filename)


@pytest.fixture(scope="module")
def results():
    return _run(golden.build, "fluid18_proposal_labels.npz")


@pytest.fixture(scope="module")
def cascade_results():
    return _run(golden.build_cascade, "fluid18_cascade_labels.npz")


@pytest.mark.parametrize("name", golden.NAMES)
def test_matches_fluid18(results, name):
    _check(results, golden.NAMES, name)


@pytest.mark.parametrize("name", golden.CASCADE_NAMES)
def test_cascade_rcnn_matches_fluid18(cascade_results, name):
    _check(cascade_results, golden.CASCADE_NAMES, name)


def _check(results, names, name):
    got, expected = results
    t = got[names.index(name)]
    g, e = np.array(t), expected[name]
    if e.size == 0:  # Fluid fetches an empty level as a shapeless float64 tensor
        assert g.size == 0
    else:
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-4)
    lod = t.lod()[-1] if hasattr(t, "lod") and t.lod() else []
    assert list(lod) == list(expected[name + "_lod"])
