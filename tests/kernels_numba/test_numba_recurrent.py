"""oar-kernels-numba's lstm and lstm_grad (the whole recurrence compiled) against numpy's."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("oar_kernels_numba")
from oar_kernels_numba.compat import unavailable_reason

if unavailable_reason() is not None:
    pytest.skip(f"numba unavailable: {unavailable_reason()}", allow_module_level=True)

from oar.api import LoDTensor

rng = np.random.default_rng(37)
TOL = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=1e-9, atol=1e-11)}


def _case(dtype, peep, initial, lens=(3, 0, 7, 1, 5), h=6):
    n, rows = len(lens), sum(lens)
    off = np.concatenate([[0], np.cumsum(lens)]).tolist()
    ins = {
        "Input": LoDTensor((rng.standard_normal((rows, 4 * h)) * 0.7).astype(dtype), [off]),
        "Weight": (rng.standard_normal((h, 4 * h)) * 0.4).astype(dtype),
        "Bias": (rng.standard_normal((1, (7 if peep else 4) * h)) * 0.3).astype(dtype),
    }
    if initial:
        ins["H0"] = rng.standard_normal((n, h)).astype(dtype)
        ins["C0"] = rng.standard_normal((n, h)).astype(dtype)
    return ins


def _close(got, want, dtype, keys):
    for k in keys:
        a, b = np.asarray(got[k]), np.asarray(want[k])
        assert a.dtype == b.dtype and a.shape == b.shape, k
        np.testing.assert_allclose(a, b, **TOL[dtype], err_msg=k)
        if isinstance(want[k], LoDTensor):
            assert got[k].lod() == want[k].lod(), k


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("peep", [True, False])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("initial", [False, True])
@pytest.mark.parametrize(
    "acts",
    [("sigmoid", "tanh", "tanh"), ("sigmoid", "relu", "identity"), ("tanh", "identity", "relu")],
)
def test_lstm_and_grad(dtype, peep, reverse, initial, acts, numba_pair, monkeypatch):
    mine, numpy_k = numba_pair("lstm", dtype)
    gmine, gnumpy = numba_pair("lstm_grad", dtype)
    monkeypatch.setattr(mine.__self__, "fb", {})  # the compiled loops must run, no fallback
    attrs = {
        "use_peepholes": peep,
        "is_reverse": reverse,
        "gate_activation": acts[0],
        "cell_activation": acts[1],
        "candidate_activation": acts[2],
    }
    ins = _case(dtype, peep, initial)
    got, want = mine(dict(ins), attrs), numpy_k(dict(ins), attrs)
    _close(got, want, dtype, want.keys())
    rows, h = np.asarray(ins["Input"]).shape[0], ins["Weight"].shape[0]
    gins = dict(ins, Hidden=want["Hidden"], Cell=want["Cell"], BatchGate=want["BatchGate"])
    gins["Hidden@GRAD"] = rng.standard_normal((rows, h)).astype(dtype)
    if initial:  # a gradient into Cell too (only where the graph reads it)
        gins["Cell@GRAD"] = rng.standard_normal((rows, h)).astype(dtype)
    got, want = gmine(dict(gins), attrs), gnumpy(dict(gins), attrs)
    assert got.keys() == want.keys()
    _close(got, want, dtype, want.keys())


def test_unknown_activation_goes_to_the_numpy_kernel(numba_pair):
    mine, numpy_k = numba_pair("lstm")
    ins = _case("float32", True, False)
    attrs = {
        "use_peepholes": True,
        "is_reverse": False,
        "gate_activation": "sigmoid",
        "cell_activation": "tanh",
        "candidate_activation": "tanh",
    }
    attrs["cell_activation"] = "softsign"  # not compiled: the numpy kernel's error/result
    with pytest.raises(KeyError):
        mine(dict(ins), attrs)
    attrs["cell_activation"] = "tanh"
    ins["Input"] = LoDTensor(np.asarray(ins["Input"]), [[0, 16]])  # one sequence
    got, want = mine(dict(ins), attrs), numpy_k(dict(ins), attrs)
    _close(got, want, "float32", want.keys())
