"""lstmp (dynamic_lstmp) against a step-by-step numpy reference, gradient checks through
time (clipping included), and the numbers Fluid 1.8.5 gives (golden data in data/)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(37)
H, P = 3, 2
LENS = [2, 0, 4, 1]
DATA = Path(__file__).parent / "data"


def _sig(z):
    return 1 / (1 + np.exp(-z))


def _ref(Input, Weight, ProjWeight, Bias, use_peepholes=True, is_reverse=False, H0=None,
         C0=None, cell_clip=0.0, proj_clip=0.0, **_):  # fmt: skip
    b = Bias.reshape(-1)
    proj, cel = np.zeros((len(Input), P)), np.zeros((len(Input), H))
    off = np.concatenate([[0], np.cumsum(LENS)]).astype(int)
    for s, (a, e) in enumerate(zip(off[:-1], off[1:])):
        r = np.zeros(P) if H0 is None else H0[s]
        c = np.zeros(H) if C0 is None else C0[s]
        for t in range(e - 1, a - 1, -1) if is_reverse else range(a, e):
            gc, gi, gf, go = np.split(Input[t] + r @ Weight + b[: 4 * H], 4)
            if use_peepholes:
                gi, gf = gi + c * b[4 * H : 5 * H], gf + c * b[5 * H : 6 * H]
            c = _sig(gf) * c + _sig(gi) * np.tanh(gc)
            if cell_clip:
                c = np.clip(c, -cell_clip, cell_clip)
            if use_peepholes:
                go = go + c * b[6 * H :]
            r = np.tanh((_sig(go) * np.tanh(c)) @ ProjWeight)
            if proj_clip:
                r = np.clip(r, -proj_clip, proj_clip)
            proj[t], cel[t] = r, c
    return {"Projection": proj, "Cell": cel}


def _case(name, peep=True, reverse=False, init=False, clips=(0.0, 0.0)):
    ins = {
        "Input": rng.uniform(-1, 1, (7, 4 * H)),
        "Weight": rng.uniform(-0.5, 0.5, (P, 4 * H)),
        "ProjWeight": rng.uniform(-0.5, 0.5, (H, P)),
        "Bias": rng.uniform(-0.5, 0.5, (1, (7 if peep else 4) * H)),
    }
    if init:
        ins["H0"] = rng.uniform(-1, 1, (4, P))
        ins["C0"] = rng.uniform(-1, 1, (4, H))
    attrs = {"use_peepholes": peep, "is_reverse": reverse}
    attrs.update(cell_clip=clips[0], proj_clip=clips[1])
    return OpCase(
        "lstmp",
        ins,
        attrs,
        ref=_ref,
        grad=list(ins),
        grad_outputs=["Projection", "Cell"],
        lod={"input_0": [LENS]},
        name=name,
    )


CASES = [
    _case("peepholes"),
    _case("plain-reverse", peep=False, reverse=True),
    _case("h0-c0", init=True),
    # clips that bite on some entries and not others (away from the kink: finite differences)
    _case("clipped", init=True, clips=(0.45, 0.3)),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_lstmp(case):
    check_case(case)


def test_outputs_and_gradients_equal_fluid_1_8_5():
    spec = importlib.util.spec_from_file_location("fluid18_lstmp", DATA / "fluid18_lstmp.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    got = gen.run(fluid)
    golden = np.load(DATA / "fluid18_lstmp.npz")
    want = [golden[f"arr_{i}"] for i in range(len(golden.files))]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5, err_msg=f"fetch {i}")


def test_proj_size_must_be_positive():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 8], "float32", lod_level=1)
        with pytest.raises(ValueError, match="dynamic_lstmp: proj_size must be a positive int"):
            fluid.layers.dynamic_lstmp(x, size=8, proj_size=0)
