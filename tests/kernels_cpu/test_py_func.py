"""py_func: a Python forward and backward inside a program (static and the gradient check)."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.ops.py_func import register_py_func
from oar.testing import OpCase, check_case

rng = np.random.default_rng(121)


def _tanh(x):
    return np.tanh(x)


def _tanh_grad(x, y, dy):  # x is skipped below in the layer test; all three here
    return dy * (1 - np.square(y))


FWD, BWD = register_py_func(_tanh), register_py_func(_tanh_grad)
CASES = [
    OpCase(
        "py_func",
        {"X": [rng.uniform(-1, 1, (3, 4))]},
        {"forward_callable_id": FWD, "backward_callable_id": BWD, "backward_skip_vars": []},
        ref=lambda X, **_: {"Out": [np.tanh(X[0])]},
        grad=["X"],
    )
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_py_func(case):
    check_case(case)


def test_layer_forward_backward_and_skip():
    calls = []

    def fwd(a, b):
        calls.append("fwd")
        return a * b, a + b

    def bwd(b, prod, total, dprod, dtotal):  # a skipped
        calls.append("bwd")
        return dprod * b + dtotal, None

    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        a = fluid.data("a", [2, 3], "float32")
        b = fluid.data("b", [2, 3], "float32")
        a.stop_gradient = False
        block = main.current_block()
        prod = block.create_var(name="prod", shape=[2, 3], dtype="float32")
        total = block.create_var(name="total", shape=[2, 3], dtype="float32")
        fluid.layers.py_func(
            fwd, [a, b], [prod, total], backward_func=bwd, skip_vars_in_backward_input=[a]
        )
        loss = fluid.layers.reduce_sum(fluid.layers.elementwise_add(prod, total))
        (ga,) = fluid.gradients([loss], [a])
    av, bv = (
        rng.uniform(-1, 1, (2, 3)).astype("float32"),
        rng.uniform(-1, 1, (2, 3)).astype("float32"),
    )
    out, g = fluid.Executor(fluid.CPUPlace()).run(
        main, feed={"a": av, "b": bv}, fetch_list=[loss, ga], scope=fluid.Scope()
    )
    np.testing.assert_allclose(out, np.sum(av * bv + av + bv), rtol=1e-5)
    np.testing.assert_allclose(g, bv + 1, rtol=1e-6)
    assert calls == ["fwd", "bwd"]


def test_bad_arguments_are_refused():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [2], "float32")
        with pytest.raises(OarError, match="callable"):
            fluid.layers.py_func(3, x, None)
        with pytest.raises(OarError, match="needs backward_func"):
            fluid.layers.py_func(np.tanh, x, None, skip_vars_in_backward_input=[x])
