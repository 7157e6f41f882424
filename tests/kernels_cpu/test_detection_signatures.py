"""oar's detection layers have Fluid 1.8.5's signatures and defaults (data/ holds Fluid's)."""

import inspect
import json
from pathlib import Path

import pytest
from oar import fluid

SIGS = json.loads((Path(__file__).parent / "data/fluid18_detection_signatures.json").read_text())


def _target(key):
    mod, name = key.split(".")
    obj = getattr(getattr(fluid, mod, None), name, None)
    if obj is not None and inspect.isclass(obj):
        return obj.__init__, 1
    return obj, 0


IMPLEMENTED = [k for k in sorted(SIGS) if _target(k)[0] is not None]


def test_the_main_detection_layers_exist():
    for name in ("iou_similarity", "box_coder", "prior_box", "density_prior_box", "yolo_box"):
        assert f"layers.{name}" in IMPLEMENTED


@pytest.mark.parametrize("key", IMPLEMENTED)
def test_signature_is_fluids(key):
    fn, skip = _target(key)
    params = list(inspect.signature(inspect.unwrap(fn)).parameters.values())[skip:]
    got = [
        [p.name, None if p.default is inspect.Parameter.empty else repr(p.default)] for p in params
    ]
    assert got == SIGS[key]
