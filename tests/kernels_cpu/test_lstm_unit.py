"""lstm_unit: gates [i, f, o, j], forget_bias; the layer reproduces Fluid 1.8.5's numbers."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(61)


def _sig(z):
    return 1 / (1 + np.exp(-z))


def _ref(X, C_prev, forget_bias=0.0):
    i, f, o, j = np.split(X, 4, axis=1)
    c = _sig(f + forget_bias) * C_prev + _sig(i) * np.tanh(j)
    return {"C": c, "H": _sig(o) * np.tanh(c)}


CASES = [
    OpCase(
        "lstm_unit",
        {"X": rng.uniform(-1, 1, (3, 8)), "C_prev": rng.uniform(-1, 1, (3, 2))},
        {"forget_bias": 0.5},
        ref=_ref,
        grad=["X", "C_prev"],
    )
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_lstm_unit(case):
    check_case(case)


def test_layer_equals_fluid_1_8_5():
    place = fluid.CPUPlace()
    rs = np.random.RandomState(0)  # the oracle's draws
    w = rs.uniform(-1, 1, (5, 12)).astype("float32")
    b = rs.uniform(-1, 1, (12,)).astype("float32")
    xv, hv, cv = (rs.uniform(-1, 1, s).astype("float32") for s in ((2, 2), (2, 3), (2, 3)))
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 2], "float32")
        h = fluid.data("h", [None, 3], "float32")
        c = fluid.data("c", [None, 3], "float32")
        hh, cc = fluid.layers.lstm_unit(
            x,
            h,
            c,
            forget_bias=0.5,
            param_attr=fluid.ParamAttr(name="lw"),
            bias_attr=fluid.ParamAttr(name="lb"),
        )
    assert [op.type for op in main.global_block().ops] == [
        "concat",
        "mul",
        "elementwise_add",
        "lstm_unit",
    ]
    exe = fluid.Executor(place)
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        scope.find_var("lw").get_tensor().set(w, place)
        scope.find_var("lb").get_tensor().set(b, place)
        got_h, got_c = exe.run(main, feed={"x": xv, "h": hv, "c": cv}, fetch_list=[hh, cc])
    np.testing.assert_allclose(
        got_h,
        [
            [-0.36124467849731445, 0.33567410707473755, 0.31452038884162903],
            [-0.3306983411312103, 0.04783056676387787, -0.32456544041633606],
        ],
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        got_c,
        [
            [-0.5854621529579163, 0.5309638381004333, 0.4123767614364624],
            [-0.6267637014389038, 0.19313760101795197, -0.7080578804016113],
        ],
        rtol=1e-5,
    )
