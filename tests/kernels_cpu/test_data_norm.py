"""data_norm: normalisation by running summaries; the summaries' "gradients" are the batch
statistics, as Fluid 1.8.5 reports them."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

rng = np.random.default_rng(161)
X = rng.uniform(-1, 1, (4, 3))
BS, BSUM, BSQ = rng.uniform(50, 100, 3), rng.uniform(-5, 5, 3), rng.uniform(50, 100, 3)


def _ref(X, BatchSize, BatchSum, BatchSquareSum, **_):
    m, s = BatchSum / BatchSize, np.sqrt(BatchSize / BatchSquareSum)
    return {"Y": (X - m) * s, "Means": m, "Scales": s}


SLOT_X = rng.uniform(0.5, 2, (5, 6)) * rng.choice([-1, 1], (5, 6))
SLOT_X[[1, 3], 0] = 0.0  # slot 0 not shown in rows 1 and 3
SLOT_X[2, 3] = 0.0  # slot 1 not shown in row 2
C6 = {k: rng.uniform(50, 100, 6) for k in ("BatchSize", "BatchSquareSum")}


def _ref_slots(X, BatchSize, BatchSum, BatchSquareSum, scale_w, bias, **_):
    m, s = BatchSum / BatchSize, np.sqrt(BatchSize / BatchSquareSum)
    shown = np.repeat(np.abs(X[:, ::3]) >= 1e-7, 3, axis=1)
    return {"Y": ((X - m) * s * scale_w + bias) * shown, "Means": m, "Scales": s}


CASES = [
    OpCase(
        "data_norm",
        {
            "X": SLOT_X,
            "BatchSize": C6["BatchSize"],
            "BatchSum": rng.uniform(-5, 5, 6),
            "BatchSquareSum": C6["BatchSquareSum"],
            "scale_w": rng.uniform(0.5, 1.5, 6),
            "bias": rng.uniform(-0.5, 0.5, 6),
        },
        {"epsilon": 1e-4, "slot_dim": 3, "enable_scale_and_shift": True},
        ref=_ref_slots,
        grad=["X", "scale_w", "bias"],
        grad_outputs=["Y"],
        eps=5e-8,  # a hidden slot's 0 must stay below the 1e-7 show threshold
        name="slots",
    ),
    OpCase(
        "data_norm",
        {"X": X, "BatchSize": BS, "BatchSum": BSUM, "BatchSquareSum": BSQ},
        {"epsilon": 1e-5, "slot_dim": -1, "enable_scale_and_shift": False},
        ref=_ref,
        grad=["X"],
        grad_outputs=["Y"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_data_norm(case):
    check_case(case)


def test_layer_and_statistics_match_fluid18():
    x = np.array([[1.0, 2.0, 3.0], [4.0, 6.0, 8.0]], "float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        xv = fluid.data("x", [None, 3], "float32")
        xv.stop_gradient = False
        y = fluid.layers.data_norm(xv)
        params = main.all_parameters()
        assert [p.name for p in params] == ["dn.batch_size", "dn.batch_sum", "dn.batch_square_sum"]
        grads = fluid.gradients([fluid.layers.reduce_sum(y)], [xv] + params)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    got = exe.run(main, feed={"x": x}, fetch_list=[y] + grads, scope=scope)
    # Fluid 1.8.5's values for the same program
    want = [x, np.ones((2, 3)), [2.0, 2.0, 2.0], [5.0, 8.0, 11.0], [17.00002, 40.00002, 73.00002]]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_bad_input_is_refused():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        with pytest.raises(OarError, match=r"\[N, C\]"):
            fluid.layers.data_norm(fluid.data("x", [2, 3, 4], "float32"))
        with pytest.raises(OarError, match="multiple of slot_dim=2"):
            fluid.layers.data_norm(fluid.data("y", [2, 3], "float32"), slot_dim=2)
        with pytest.raises(OarError, match="slot_dim must be -1 or positive"):
            fluid.layers.data_norm(fluid.data("z", [2, 4], "float32"), slot_dim=0)
        with pytest.raises(OarError, match="param_attr must be a dict"):
            fluid.layers.data_norm(fluid.data("p", [2, 4], "float32"), param_attr="w")


SLOT_GOLDEN = np.load(Path(__file__).parent / "data" / "fluid18_data_norm_slot.npz")


@pytest.mark.parametrize(
    "tag,slot_dim,sas,eps",
    [("plain", 3, False, 1e-4), ("sas", 3, True, 1e-5), ("two", 2, True, 1e-3)],
)
def test_slot_statistics_match_fluid18(tag, slot_dim, sas, eps):
    g = {k[len(tag) + 1 :]: SLOT_GOLDEN[k] for k in SLOT_GOLDEN.files if k.startswith(tag + "_")}
    c = g["x"].shape[1]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        xv = fluid.data("x", [None, c], "float32")
        xv.stop_gradient = False
        pa = {"scale_w": 1.5, "bias": 0.25} if sas else None
        y = fluid.layers.data_norm(
            xv, epsilon=eps, slot_dim=slot_dim, enable_scale_and_shift=sas, param_attr=pa
        )
        params = main.all_parameters()
        loss = fluid.layers.reduce_sum(y * fluid.layers.assign(g["w"]))
        grads = fluid.gradients([loss], [xv] + params)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    for k in ("batch_size", "batch_sum", "batch_square_sum"):
        scope.find_var("dn." + k).get_tensor().set(g[k], fluid.CPUPlace())
    got = exe.run(main, feed={"x": g["x"]}, fetch_list=[y] + grads, scope=scope)
    names = ["y", "dx"] + ["d" + p.name.split(".")[1] for p in params]
    for name, value in zip(names, got):
        np.testing.assert_allclose(value, g[name], rtol=2e-5, atol=2e-6, err_msg=name)
