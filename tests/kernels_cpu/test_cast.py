"""cast: dtype conversion and its gradient (a cast back)."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case, run_forward

rng = np.random.default_rng(2)


def _ref(X, in_dtype, out_dtype):
    return {"Out": X.astype(out_dtype)}


CASES = [
    OpCase(
        "cast",
        {"X": rng.uniform(-2, 2, (2, 3))},
        {"in_dtype": "float64", "out_dtype": "float32"},
        ref=_ref,
        grad=["X"],
        eps=1e-3,
        grad_rtol=1e-3,
        grad_atol=1e-5,
        name="f64-f32",
    ),
    OpCase(
        "cast",
        {"X": rng.uniform(-2, 2, (2, 3)).astype("float32")},
        {"in_dtype": "float32", "out_dtype": "float64"},
        ref=_ref,
        grad=["X"],
        eps=1e-2,
        grad_rtol=1e-3,
        grad_atol=1e-4,
        name="f32-f64",
    ),
    OpCase(
        "cast",
        {"X": np.array([1, 0, 7, -3], "int64")},
        {"in_dtype": "int64", "out_dtype": "float64"},
        ref=_ref,
        name="int64-f64",
    ),
    OpCase(
        "cast",
        {"X": np.array([1.7, -0.2, 3.9], "float32")},
        {"in_dtype": "float32", "out_dtype": "int32"},
        ref=_ref,
        name="f32-int32-truncates",
    ),
    OpCase(
        "cast",
        {"X": np.array([0.0, 2.0, -1.0], "float32")},
        {"in_dtype": "float32", "out_dtype": "bool"},
        ref=_ref,
        name="f32-bool",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_cast(case):
    check_case(case)


def test_cast_output_dtype_is_exact():
    got = run_forward(CASES[2])["Out"][0]
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [1.0, 0.0, 7.0, -3.0])


def test_cast_grad_has_input_dtype():
    from oar import fluid

    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", shape=[3], dtype="float32", append_batch_size=False)
        x.stop_gradient = False
        y = fluid.layers.cast(x, "float64")
        (gx,) = fluid.gradients([fluid.layers.mean(y)], [x])
    exe = fluid.Executor(fluid.CPUPlace())
    (g,) = exe.run(main, feed={"x": np.ones(3, "float32")}, fetch_list=[gx], scope=fluid.Scope())
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.full(3, 1 / 3, "float32"), rtol=1e-6)


def test_cast_in_dtype_mismatch_is_refused():
    from oar import fluid

    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        out = main.global_block().create_var(name="out")
        with pytest.raises(TypeError, match="in_dtype"):
            main.global_block().append_op(
                "cast", {"X": [x]}, {"Out": [out]}, {"in_dtype": "int64", "out_dtype": "float64"}
            )
