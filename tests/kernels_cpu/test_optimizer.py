"""Parameter-update ops: sgd (dense and SelectedRows grads) and adam against numpy over steps."""

import numpy as np
import pytest
from oar.lod_tensor import SelectedRows
from oar.testing import OpCase, check_case

rng = np.random.default_rng(9)


def r(*shape):
    return rng.uniform(-1, 1, shape).astype("float32")


def _sgd_ref(Param, LearningRate, Grad):
    return {"ParamOut": Param - LearningRate[0] * Grad}


def adam_reference(p, g, lr, m1, m2, b1p, b2p, beta1=0.9, beta2=0.999, epsilon=1e-8):
    """Fluid 1.8's adam update in float64 (checked against Fluid 1.8.5: epsilon is not
    bias-corrected, and the betas are float32 attrs)."""
    beta1, beta2 = float(np.float32(beta1)), float(np.float32(beta2))
    m1 = beta1 * m1 + (1 - beta1) * g
    m2 = beta2 * m2 + (1 - beta2) * g * g
    lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
    p = p - lr_t * m1 / (np.sqrt(m2) + epsilon)
    return p, m1, m2, b1p * beta1, b2p * beta2


def _adam_ref(
    Param,
    Grad,
    LearningRate,
    Moment1,
    Moment2,
    Beta1Pow,
    Beta2Pow,
    beta1=0.9,
    beta2=0.999,
    epsilon=1e-8,
    **_,
):
    p, m1, m2, b1p, b2p = adam_reference(
        Param.astype("float64"),
        Grad,
        LearningRate[0],
        Moment1,
        Moment2,
        Beta1Pow[0],
        Beta2Pow[0],
        beta1,
        beta2,
        epsilon,
    )
    return {
        "ParamOut": p,
        "Moment1Out": m1,
        "Moment2Out": m2,
        "Beta1PowOut": np.array([b1p]),
        "Beta2PowOut": np.array([b2p]),
    }


def _adam_inputs():
    return {
        "Param": r(3, 2),
        "Grad": r(3, 2),
        "LearningRate": np.array([0.01], "float32"),
        "Moment1": r(3, 2) * 0.1,
        "Moment2": np.abs(r(3, 2)) * 0.1,
        "Beta1Pow": np.array([0.9**3], "float32"),
        "Beta2Pow": np.array([0.999**3], "float32"),
    }


CASES = [
    OpCase(
        "sgd",
        {"Param": r(3, 4), "LearningRate": np.array([0.1], "float32"), "Grad": r(3, 4)},
        ref=_sgd_ref,
    ),
    OpCase(
        "sgd",
        {
            "Param": r(5).astype("float64"),
            "LearningRate": np.array([0.5]),
            "Grad": r(5).astype("float64"),
        },
        ref=_sgd_ref,
        name="float64",
    ),
    OpCase("adam", _adam_inputs(), ref=_adam_ref, rtol=1e-5, atol=1e-6),
    OpCase(
        "adam",
        _adam_inputs(),
        {"beta1": 0.5, "beta2": 0.9, "epsilon": 1e-4},
        ref=_adam_ref,
        rtol=1e-5,
        atol=1e-6,
        name="attrs",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_optimizer(case):
    check_case(case)


def _optimizer_program(op_type, names_shapes, extra_inputs=(), attrs=None, sparse_grad=False):
    """A one-op program whose inputs all live in the scope (as in training)."""
    from oar import fluid
    from oar.framework.dtypes import VarType

    main = fluid.Program()
    block = main.global_block()
    for name, shape in names_shapes.items():
        vtype = VarType.SELECTED_ROWS if (sparse_grad and name == "Grad") else VarType.LOD_TENSOR
        block.create_var(
            name=name.lower(), shape=shape, dtype="float32", persistable=name != "Grad", type=vtype
        )
    opdef_in = {n: [n.lower()] for n in names_shapes}
    outs = {
        n + "Out": [n.lower()]
        for n in ("Param", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow")
        if n in names_shapes
    }
    block.append_op(op_type, opdef_in, outs, attrs or {})
    return main


def test_adam_matches_numpy_over_several_steps():
    from oar import fluid

    shapes = {
        "Param": [4, 3],
        "Grad": [4, 3],
        "LearningRate": [1],
        "Moment1": [4, 3],
        "Moment2": [4, 3],
        "Beta1Pow": [1],
        "Beta2Pow": [1],
    }
    main = _optimizer_program("adam", shapes, attrs={"beta1": 0.8, "beta2": 0.95, "epsilon": 1e-6})
    scope = fluid.Scope()
    p = r(4, 3)
    state = {
        "param": p.copy(),
        "learningrate": np.array([0.05], "float32"),
        "moment1": np.zeros((4, 3), "float32"),
        "moment2": np.zeros((4, 3), "float32"),
        "beta1pow": np.array([0.8], "float32"),
        "beta2pow": np.array([0.95], "float32"),
    }
    for name, value in state.items():
        scope.var(name).value = fluid.LoDTensor(value.copy())
    exe = fluid.Executor(fluid.CPUPlace())
    ref = [p.astype("float64"), np.zeros((4, 3)), np.zeros((4, 3)), 0.8, 0.95]
    for _ in range(5):
        g = r(4, 3)
        scope.var("grad").value = fluid.LoDTensor(g)
        got_p, got_b1p = exe.run(main, fetch_list=["param", "beta1pow"], scope=scope)
        ref = list(
            adam_reference(
                ref[0], g.astype("float64"), 0.05, ref[1], ref[2], ref[3], ref[4], 0.8, 0.95, 1e-6
            )
        )
        np.testing.assert_allclose(got_p, ref[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got_b1p, [ref[3]], rtol=1e-6)
    np.testing.assert_allclose(
        np.array(scope.find_var("moment2").get_tensor()), ref[2], rtol=1e-4, atol=1e-9
    )


def test_sgd_with_selected_rows_grad_updates_only_its_rows():
    from oar import fluid

    main = _optimizer_program(
        "sgd", {"Param": [5, 2], "LearningRate": [1], "Grad": [5, 2]}, sparse_grad=True
    )
    scope = fluid.Scope()
    p = r(5, 2)
    scope.var("param").value = fluid.LoDTensor(p.copy())
    scope.var("learningrate").value = fluid.LoDTensor(np.array([0.5], "float32"))
    gv = r(3, 2)
    scope.var("grad").value = SelectedRows([1, 3, 1], 5, gv)
    (got,) = fluid.Executor(fluid.CPUPlace()).run(main, fetch_list=["param"], scope=scope)
    expected = p.copy()
    expected[1] -= 0.5 * (gv[0] + gv[2])  # a repeated row is applied twice
    expected[3] -= 0.5 * gv[1]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    np.testing.assert_array_equal(got[[0, 2, 4]], p[[0, 2, 4]])


def test_sgd_updates_parameter_in_place():
    from oar import fluid

    main = _optimizer_program("sgd", {"Param": [3], "LearningRate": [1], "Grad": [3]})
    scope = fluid.Scope()
    scope.var("param").value = fluid.LoDTensor(np.ones(3, "float32"))
    scope.var("learningrate").value = fluid.LoDTensor(np.array([0.1], "float32"))
    scope.var("grad").value = fluid.LoDTensor(np.ones(3, "float32"))
    buf = np.asarray(scope.find_var("param").get_tensor())  # the scope's own array, not a copy
    fluid.Executor(fluid.CPUPlace()).run(main, scope=scope)
    np.testing.assert_allclose(buf, np.full(3, 0.9, "float32"))
    assert np.asarray(scope.find_var("param").get_tensor()) is buf
