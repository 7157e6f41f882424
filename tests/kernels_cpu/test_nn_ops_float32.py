"""float32 stays float32: every nn-ops case run with float32 inputs gives float32 float outputs."""

import importlib.util
import pathlib

import attrs
import numpy as np
import pytest
from oar.testing import run_forward

HERE = pathlib.Path(__file__).parent
MODULES = [
    "test_embedding",
    "test_losses",
    "test_reduce",
    "test_manip",
    "test_indexing",
    "test_search",
    "test_clip",
    "test_compare",
    "test_ranges",
    "test_tensor_misc",
    "test_rank_losses",
    "test_random_like",
    "test_rearrange",
]


def _cases():
    out = []
    for name in MODULES:
        spec = importlib.util.spec_from_file_location(f"_f32_{name}", HERE / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        out += mod.CASES
    return out


def _f32(v):
    if isinstance(v, (list, tuple)):
        return [_f32(x) for x in v]
    v = np.asarray(v)
    return v.astype("float32") if v.dtype == np.float64 else v


CASES = [
    c
    for c in _cases()
    if any(
        np.asarray(v).dtype == np.float64
        for vs in c.inputs.values()
        for v in (vs if isinstance(vs, (list, tuple)) else [vs])
    )
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_float32_in_float32_out(case):
    case32 = attrs.evolve(case, inputs={k: _f32(v) for k, v in case.inputs.items()})
    got = run_forward(case32)
    for slot, arrays in got.items():
        for a in arrays:
            if np.asarray(a).dtype.kind == "f":
                assert np.asarray(a).dtype == np.float32, (
                    f"{case}: {slot} came out {np.asarray(a).dtype}"
                )
