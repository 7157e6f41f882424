"""retinanet_detection_output reproduces Fluid 1.8.5's detections (golden data in data/)."""

import importlib.util
from pathlib import Path

import numpy as np
from oar import fluid

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location(
    "fluid18_detection_retina", DATA / "fluid18_detection_retina.py"
)
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


def test_matches_fluid18():
    with fluid.unique_name.guard():
        main, startup, feed, outs = golden.build(fluid)
    exe = fluid.Executor(fluid.CPUPlace())
    got = exe.run(main, feed=feed, fetch_list=outs, scope=fluid.Scope(), return_numpy=False)[0]
    expected = np.load(DATA / "fluid18_detection_retina.npz")
    np.testing.assert_allclose(np.array(got), expected["out"], rtol=1e-5, atol=1e-4)
    assert list(got.lod()[-1]) == list(expected["out_lod"])
