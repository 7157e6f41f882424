"""fluid.metrics.DetectionMAP (the detection_map op and its accumulated state) reproduces
Fluid 1.8.5's per-batch and accumulated mAP over batches and a reset (golden data in data/)."""

import importlib.util
from pathlib import Path

import numpy as np
from oar import fluid

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location(
    "fluid18_detection_map", DATA / "fluid18_detection_map.py"
)
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


class _Fluid:
    """``fluid`` with ``metrics.DetectionMAP`` from its module (until fluid.metrics exports it)."""

    def __getattr__(self, name):
        if name == "metrics" and not hasattr(getattr(fluid, "metrics", None), "DetectionMAP"):
            from oar.metrics import detection_map

            return detection_map
        return getattr(fluid, name)


def test_matches_fluid18():
    with fluid.unique_name.guard(), fluid.scope_guard(fluid.Scope()):
        got = golden.run(_Fluid())
    np.testing.assert_allclose(
        got, np.load(DATA / "fluid18_detection_map.npz")["maps"], rtol=1e-5, atol=1e-6
    )
