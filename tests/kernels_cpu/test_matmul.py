"""mul (flatten to 2-D by num_col_dims) and matmul (transposes, batches, 1-D, alpha)."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(5)


def r(*shape):
    return rng.uniform(-1, 1, shape).astype("float64")


def _mul_ref(X, Y, x_num_col_dims=1, y_num_col_dims=1):
    x2 = X.reshape(int(np.prod(X.shape[:x_num_col_dims])), -1)
    y2 = Y.reshape(int(np.prod(Y.shape[:y_num_col_dims])), -1)
    return {"Out": (x2 @ y2).reshape(X.shape[:x_num_col_dims] + Y.shape[y_num_col_dims:])}


def _matmul_ref(X, Y, transpose_X=False, transpose_Y=False, alpha=1.0):
    if transpose_X and X.ndim > 1:
        X = np.swapaxes(X, -1, -2)
    if transpose_Y and Y.ndim > 1:
        Y = np.swapaxes(Y, -1, -2)
    out = np.matmul(X, Y) * alpha
    return {"Out": out.reshape(1) if out.ndim == 0 else out}


CASES = [
    OpCase("mul", {"X": r(3, 4), "Y": r(4, 2)}, ref=_mul_ref, grad=["X", "Y"], name="2d"),
    OpCase(
        "mul",
        {"X": r(2, 3, 4), "Y": r(4, 5)},
        {"x_num_col_dims": 2},
        ref=_mul_ref,
        grad=["X", "Y"],
        name="x_num_col_dims2",
    ),
    OpCase(
        "mul",
        {"X": r(2, 6), "Y": r(2, 3, 2)},
        {"y_num_col_dims": 2},
        ref=_mul_ref,
        grad=["X", "Y"],
        name="y_num_col_dims2",
    ),
    OpCase("mul", {"X": r(2, 2, 3), "Y": r(6, 2)}, ref=_mul_ref, grad=["X", "Y"], name="flatten-x"),
    OpCase("matmul", {"X": r(3, 4), "Y": r(4, 2)}, ref=_matmul_ref, grad=["X", "Y"], name="2d"),
    OpCase(
        "matmul",
        {"X": r(4, 3), "Y": r(4, 2)},
        {"transpose_X": True},
        ref=_matmul_ref,
        grad=["X", "Y"],
        name="tx",
    ),
    OpCase(
        "matmul",
        {"X": r(3, 4), "Y": r(2, 4)},
        {"transpose_Y": True},
        ref=_matmul_ref,
        grad=["X", "Y"],
        name="ty",
    ),
    OpCase(
        "matmul",
        {"X": r(4, 3), "Y": r(2, 4)},
        {"transpose_X": True, "transpose_Y": True},
        ref=_matmul_ref,
        grad=["X", "Y"],
        name="txty",
    ),
    OpCase(
        "matmul",
        {"X": r(2, 3, 4), "Y": r(2, 4, 2)},
        ref=_matmul_ref,
        grad=["X", "Y"],
        name="batched",
    ),
    OpCase(
        "matmul",
        {"X": r(2, 3, 4), "Y": r(4, 2)},
        ref=_matmul_ref,
        grad=["X", "Y"],
        name="batched-broadcast-y",
    ),
    OpCase(
        "matmul",
        {"X": r(2, 4, 3), "Y": r(2, 2, 4)},
        {"transpose_X": True, "transpose_Y": True},
        ref=_matmul_ref,
        grad=["X", "Y"],
        name="batched-txty",
    ),
    OpCase("matmul", {"X": r(4), "Y": r(4)}, ref=_matmul_ref, grad=["X", "Y"], name="1d-1d"),
    OpCase("matmul", {"X": r(4), "Y": r(4, 3)}, ref=_matmul_ref, grad=["X", "Y"], name="1d-2d"),
    OpCase("matmul", {"X": r(3, 4), "Y": r(4)}, ref=_matmul_ref, grad=["X", "Y"], name="2d-1d"),
    OpCase(
        "matmul",
        {"X": r(3, 4), "Y": r(4, 2)},
        {"alpha": 2.5},
        ref=_matmul_ref,
        grad=["X", "Y"],
        name="alpha",
    ),
    OpCase(
        "matmul",
        {"X": r(2, 3).astype("float32"), "Y": r(3, 2).astype("float32")},
        ref=_matmul_ref,
        name="float32",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_matmul(case):
    check_case(case)


def _layer_out_shape(build):
    from oar import fluid

    with fluid.program_guard(fluid.Program(), fluid.Program()):
        return build(fluid)


def test_matmul_infer_shape_matches_fluid():
    def build(fluid):
        x = fluid.layers.data("x", shape=[3, 4], dtype="float32")
        y = fluid.layers.data("y", shape=[5, 4], dtype="float32", append_batch_size=False)
        return fluid.layers.matmul(x, y, transpose_y=True).shape

    assert tuple(_layer_out_shape(build)) == (-1, 3, 5)


def test_mul_shape_mismatch_is_caught_at_build_time():
    from oar import fluid

    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        y = fluid.layers.data("y", shape=[4, 2], dtype="float32", append_batch_size=False)
        with pytest.raises(ValueError, match="mul") as info:
            fluid.layers.mul(x, y)
    assert "test_matmul.py" in str(info.value)


def test_matmul_shape_mismatch_is_caught_at_build_time():
    from oar import fluid

    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.layers.data("x", shape=[3, 4], dtype="float32", append_batch_size=False)
        y = fluid.layers.data("y", shape=[3, 4], dtype="float32", append_batch_size=False)
        with pytest.raises(ValueError, match="4 columns but Y has 3 rows"):
            fluid.layers.matmul(x, y)


def test_float16_products_accumulate_in_float32():
    """float16 mul / matmul (mixed precision): the float32 product rounded to float16."""
    from oar.plugins import registries

    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (4, 300)).astype("float16")
    y = rng.uniform(-1, 1, (300, 3)).astype("float16")
    want = (x.astype("float32") @ y.astype("float32")).astype("float16")
    kernels = registries().kernels
    mul = kernels.lookup("mul", "cpu", "float16").kernel
    out = mul({"X": x, "Y": y}, {"x_num_col_dims": 1, "y_num_col_dims": 1})["Out"]
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, want)
    attrs = {"transpose_X": False, "transpose_Y": False, "alpha": 1.0}
    np.testing.assert_array_equal(
        kernels.lookup("matmul", "cpu", "float16").kernel({"X": x, "Y": y}, attrs)["Out"], want
    )
    d = np.ones((4, 3), "float16")
    grads = kernels.lookup("mul_grad", "cpu", "float16").kernel(
        {"X": x, "Y": y, "Out@GRAD": d}, {"x_num_col_dims": 1, "y_num_col_dims": 1},
        frozenset({"X@GRAD", "Y@GRAD"}),
    )  # fmt: skip
    np.testing.assert_array_equal(
        grads["Y@GRAD"], (x.astype("float32").T @ d.astype("float32")).astype("float16")
    )
