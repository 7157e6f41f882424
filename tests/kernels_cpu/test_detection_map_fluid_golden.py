"""fluid.metrics.DetectionMAP (the detection_map op and its accumulated state) reproduces
Fluid 1.8.5's per-batch and accumulated mAP over batches and a reset (golden data in data/)."""

from pathlib import Path

import numpy as np
from oar import fluid
from oar.golden import load_golden

DATA = Path(__file__).parent / "data"
golden = load_golden(DATA / "fluid18_detection_map.py")


def test_matches_fluid18():
    with fluid.unique_name.guard(), fluid.scope_guard(fluid.Scope()):
        got = golden.run(fluid)
    np.testing.assert_allclose(
        got, np.load(DATA / "fluid18_detection_map.npz")["maps"], rtol=1e-5, atol=1e-6
    )
