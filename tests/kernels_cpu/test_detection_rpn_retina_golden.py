"""retinanet_detection_output reproduces Fluid 1.8.5's detections (golden data in data/)."""

from pathlib import Path

from oar.golden import assert_golden, load_golden, run_golden

DATA = Path(__file__).parent / "data"
golden = load_golden(DATA / "fluid18_detection_retina.py")


def test_matches_fluid18():
    results = run_golden(golden.build, DATA / "fluid18_detection_retina.npz")
    assert_golden(results, ["out"], "out", rtol=1e-5, atol=1e-4, lod=True)
