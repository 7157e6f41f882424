"""data_norm: normalisation by running summaries; the summaries' "gradients" are the batch
statistics, as Fluid 1.8.5 reports them."""

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


CASES = [
    OpCase(
        "data_norm",
        {"X": X, "BatchSize": BS, "BatchSum": BSUM, "BatchSquareSum": BSQ},
        {"epsilon": 1e-5, "slot_dim": -1, "enable_scale_and_shift": False},
        ref=_ref,
        grad=["X"],
        grad_outputs=["Y"],
    )
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
        with pytest.raises(OarError, match="slot_dim"):
            fluid.layers.data_norm(fluid.data("y", [2, 3], "float32"), slot_dim=2)
