"""lstm (dynamic_lstm) and gru (dynamic_gru) against step-by-step numpy references, gradient
checks through time, and the numbers the real Fluid 1.8.5 gives (golden data in data/)."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(31)
H = 3
LENS = [2, 0, 4, 1]
DATA = Path(__file__).parent / "data"


def _sig(z):
    return 1 / (1 + np.exp(-z))


def _segs(lens):
    off = np.concatenate([[0], np.cumsum(lens)]).astype(int)
    return list(zip(off[:-1], off[1:]))


def _lstm_ref(lens, h0=None, c0=None):
    def ref(Input, Weight, Bias, use_peepholes=True, is_reverse=False, H0=None, C0=None, **_):
        b = Bias.reshape(-1)
        hid, cel = np.zeros((len(Input), H)), np.zeros((len(Input), H))
        for s, (a, e) in enumerate(_segs(lens)):
            h = np.zeros(H) if H0 is None else H0[s]
            c = np.zeros(H) if C0 is None else C0[s]
            order = range(e - 1, a - 1, -1) if is_reverse else range(a, e)
            for t in order:
                g = Input[t] + h @ Weight + b[: 4 * H]
                gc, gi, gf, go = np.split(g, 4)
                if use_peepholes:
                    gi, gf = gi + c * b[4 * H : 5 * H], gf + c * b[5 * H : 6 * H]
                c = _sig(gf) * c + _sig(gi) * np.tanh(gc)
                if use_peepholes:
                    go = go + c * b[6 * H :]
                h = _sig(go) * np.tanh(c)
                hid[t], cel[t] = h, c
        return {"Hidden": hid, "Cell": cel}

    return ref


def _gru_ref(lens):
    def ref(Input, Weight, Bias=None, is_reverse=False, origin_mode=False, H0=None, **_):
        b = np.zeros(3 * H) if Bias is None else Bias.reshape(-1)
        flat = Weight.reshape(-1)
        wg, wc = flat[: 2 * H * H].reshape(H, 2 * H), flat[2 * H * H :].reshape(H, H)
        hid = np.zeros((len(Input), H))
        for s, (a, e) in enumerate(_segs(lens)):
            h = np.zeros(H) if H0 is None else H0[s]
            order = range(e - 1, a - 1, -1) if is_reverse else range(a, e)
            for t in order:
                g = Input[t] + b
                ur = _sig(g[: 2 * H] + h @ wg)
                u, r = ur[:H], ur[H:]
                c = np.tanh(g[2 * H :] + (r * h) @ wc)
                h = u * h + (1 - u) * c if origin_mode else (1 - u) * h + u * c
                hid[t] = h
        return {"Hidden": hid}

    return ref


def _lstm_case(name, peep=True, reverse=False, init=False):
    ins = {
        "Input": rng.uniform(-1, 1, (7, 4 * H)),
        "Weight": rng.uniform(-0.5, 0.5, (H, 4 * H)),
        "Bias": rng.uniform(-0.5, 0.5, (1, (7 if peep else 4) * H)),
    }
    if init:
        ins["H0"] = rng.uniform(-1, 1, (4, H))
        ins["C0"] = rng.uniform(-1, 1, (4, H))
    return OpCase(
        "lstm",
        ins,
        {"use_peepholes": peep, "is_reverse": reverse},
        ref=_lstm_ref(LENS),
        grad=list(ins),
        grad_outputs=["Hidden", "Cell"],
        lod={"input_0": [LENS]},
        name=name,
    )


def _gru_case(name, reverse=False, origin=False, init=False):
    ins = {
        "Input": rng.uniform(-1, 1, (7, 3 * H)),
        "Weight": rng.uniform(-0.5, 0.5, (H, 3 * H)),
        "Bias": rng.uniform(-0.5, 0.5, (1, 3 * H)),
    }
    if init:
        ins["H0"] = rng.uniform(-1, 1, (4, H))
    return OpCase(
        "gru",
        ins,
        {"is_reverse": reverse, "origin_mode": origin},
        ref=_gru_ref(LENS),
        grad=list(ins),
        grad_outputs=["Hidden"],
        lod={"input_0": [LENS]},
        name=name,
    )


CASES = [
    _lstm_case("peepholes"),
    _lstm_case("plain-reverse", peep=False, reverse=True),
    _lstm_case("h0-c0", init=True),
    _gru_case("default"),
    _gru_case("origin-reverse", reverse=True, origin=True),
    _gru_case("h0", init=True),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_recurrent(case):
    check_case(case)


def test_size_must_be_a_multiple_of_four():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 6], "float32", lod_level=1)
        with pytest.raises(ValueError, match="dynamic_lstm: size must be a positive multiple of 4"):
            fluid.layers.dynamic_lstm(x, size=6)


def test_unprojected_input_names_the_layer():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 5], "float32", lod_level=1)
        with pytest.raises(ValueError, match=r"dynamic_gru: input must be \[rows, 12\]"):
            fluid.layers.dynamic_gru(x, size=4)


def test_outputs_and_gradients_equal_fluid_1_8_5():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "fluid18_rnn_golden", DATA / "fluid18_rnn_golden.py"
    )
    golden_mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(golden_mod)
    got = golden_mod.run(fluid)
    golden = np.load(DATA / "fluid18_rnn_golden.npz")
    want = [golden[f"arr_{i}"] for i in range(len(golden.files))]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5, err_msg=f"fetch {i}")
