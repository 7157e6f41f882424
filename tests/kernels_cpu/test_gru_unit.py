"""gru_unit forward against a numpy GRU step (Fluid's formulas and weight layout) and numeric gradients."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(3)
N, D = 3, 2


def r(*shape):
    return rng.uniform(-1.0, 1.0, shape).astype("float64")


def _ref(Input, HiddenPrev, Weight, Bias=None, activation=2, gate_activation=1, origin_mode=False):
    acts = {
        0: lambda z: z,
        1: lambda z: 1 / (1 + np.exp(-z)),
        2: np.tanh,
        3: lambda z: np.maximum(z, 0),
    }
    g = Input + (Bias if Bias is not None else 0)
    flat = Weight.reshape(-1)
    wg, ws = flat[: 2 * D * D].reshape(D, 2 * D), flat[2 * D * D :].reshape(D, D)
    ur = acts[gate_activation](g[:, : 2 * D] + HiddenPrev @ wg)
    u, rr = ur[:, :D], ur[:, D:]
    rhp = rr * HiddenPrev
    c = acts[activation](g[:, 2 * D :] + rhp @ ws)
    h = u * HiddenPrev + (1 - u) * c if origin_mode else (1 - u) * HiddenPrev + u * c
    return {"Gate": np.concatenate([ur, c], 1), "ResetHiddenPrev": rhp, "Hidden": h}


def _ins(bias=True):
    d = {"Input": r(N, 3 * D), "HiddenPrev": r(N, D), "Weight": r(D, 3 * D)}
    if bias:
        d["Bias"] = r(1, 3 * D)
    return d


GRADS = ["Input", "HiddenPrev", "Weight", "Bias"]
CASES = [
    OpCase("gru_unit", _ins(), ref=_ref, grad=GRADS, grad_outputs=["Hidden"], name="tanh_sigmoid"),
    OpCase(
        "gru_unit",
        _ins(),
        {"origin_mode": True},
        ref=_ref,
        grad=GRADS,
        grad_outputs=["Hidden"],
        name="origin_mode",
    ),
    OpCase(
        "gru_unit",
        _ins(),
        {"activation": 0, "gate_activation": 2},
        ref=_ref,
        grad=GRADS,
        grad_outputs=["Hidden"],
        name="identity_tanh",
    ),
    OpCase(
        "gru_unit",
        _ins(bias=False),
        ref=_ref,
        grad=GRADS[:3],
        grad_outputs=["Hidden"],
        name="no_bias",
    ),
    OpCase(
        "gru_unit",
        {k: v.astype("float32") for k, v in _ins().items()},
        ref=_ref,
        rtol=1e-5,
        atol=1e-6,
        name="float32",
    ),
]

# Hidden of Fluid 1.8.5's gru_unit for the oracle inputs below (tanh/sigmoid; origin_mode False and True)
_o = np.random.default_rng(0)
ORACLE_IN = {
    "Input": _o.uniform(-1, 1, (3, 6)).astype("float32"),
    "HiddenPrev": _o.uniform(-1, 1, (3, 2)).astype("float32"),
    "Weight": _o.uniform(-1, 1, (2, 6)).astype("float32"),
    "Bias": _o.uniform(-1, 1, (1, 6)).astype("float32"),
}
ORACLE_HIDDEN = {
    False: [[0.17893490, 0.16715321], [-0.21312493, -0.85517770], [0.50924683, 0.07437976]],
    True: [[0.12600785, 0.06870496], [0.05385751, -0.78171724], [0.41131806, 0.04013787]],
}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gru_unit(case):
    check_case(case)


@pytest.mark.parametrize("origin", [False, True])
def test_gru_unit_matches_fluid(origin):
    from oar.testing import run_forward

    got = run_forward(OpCase("gru_unit", ORACLE_IN, {"origin_mode": origin}))
    np.testing.assert_allclose(got["Hidden"][0], ORACLE_HIDDEN[origin], rtol=1e-5, atol=1e-6)


def test_gru_unit_shape_errors():
    from oar import fluid

    main = fluid.Program()
    with fluid.program_guard(main):
        b = main.global_block()
        x = b.create_var(name="x", shape=(3, 5), dtype="float32")
        h = b.create_var(name="h", shape=(3, 2), dtype="float32")
        w = b.create_var(name="w", shape=(2, 6), dtype="float32")
        outs = {s: [b.create_var(name=s)] for s in ("Gate", "ResetHiddenPrev", "Hidden")}
        with pytest.raises(Exception, match="3 \\* D"):
            b.append_op("gru_unit", {"Input": [x], "HiddenPrev": [h], "Weight": [w]}, outs)
