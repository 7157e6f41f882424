"""scale (incl. bias_after_scale and ScaleTensor), sum (incl. SelectedRows), mean, assign."""

import numpy as np
import pytest
from oar.lod_tensor import SelectedRows
from oar.testing import OpCase, check_case

rng = np.random.default_rng(6)


def r(*shape):
    return rng.uniform(-1, 1, shape).astype("float64")


def _scale_ref(X, scale=1.0, bias=0.0, bias_after_scale=True, ScaleTensor=None):
    s = float(ScaleTensor.reshape(-1)[0]) if ScaleTensor is not None else scale
    return {"Out": X * s + bias if bias_after_scale else (X + bias) * s}


def _sum_ref(X):
    return {"Out": sum(X)}


CASES = [
    OpCase(
        "scale",
        {"X": r(2, 3)},
        {"scale": 2.5, "bias": 0.5},
        ref=_scale_ref,
        grad=["X"],
        name="bias-after",
    ),
    OpCase(
        "scale",
        {"X": r(2, 3)},
        {"scale": 2.5, "bias": 0.5, "bias_after_scale": False},
        ref=_scale_ref,
        grad=["X"],
        name="bias-before",
    ),
    OpCase(
        "scale",
        {"X": r(2, 3), "ScaleTensor": np.array([-3.0])},
        {"scale": 2.0, "bias": 1.0},
        ref=_scale_ref,
        grad=["X"],
        name="scale-tensor",
    ),
    OpCase(
        "scale",
        {"X": np.array([1, 2, 3], "int64")},
        {"scale": 3.0, "bias": 1.0},
        ref=_scale_ref,
        name="int64",
    ),
    OpCase("sum", {"X": [r(2, 3), r(2, 3), r(2, 3)]}, ref=_sum_ref, grad=["X"], name="three"),
    OpCase("sum", {"X": [r(4)]}, ref=_sum_ref, grad=["X"], name="one"),
    OpCase("sum", {"X": [r(2, 2), r(2, 2)]}, ref=_sum_ref, grad=["X"], name="two"),
    OpCase("mean", {"X": r(3, 4)}, ref=lambda X: {"Out": X.mean().reshape(1)}, grad=["X"]),
    OpCase(
        "mean",
        {"X": r(5).astype("float32")},
        ref=lambda X: {"Out": X.mean(dtype="float32").reshape(1)},
        rtol=1e-6,
        name="float32",
    ),
    OpCase("assign", {"X": r(2, 3)}, ref=lambda X: {"Out": X}, grad=["X"]),
    OpCase("assign", {"X": np.array([3, 1], "int32")}, ref=lambda X: {"Out": X}, name="int32"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_math(case):
    check_case(case)


def test_scale_keeps_dtype():
    from oar.testing import run_forward

    got = run_forward(OpCase("scale", {"X": np.ones(3, "float32")}, {"scale": 0.1}))["Out"][0]
    assert got.dtype == np.float32


def _run_sum(values):
    """Run sum over scope-held values (dense arrays or SelectedRows)."""
    from oar import fluid
    from oar.framework.dtypes import VarType

    main = fluid.Program()
    scope = fluid.Scope()
    block = main.global_block()
    names = []
    for i, v in enumerate(values):
        name = f"x{i}"
        sparse = isinstance(v, SelectedRows)
        block.create_var(
            name=name,
            shape=[5, 2],
            dtype="float64",
            type=VarType.SELECTED_ROWS if sparse else VarType.LOD_TENSOR,
        )
        scope.var(name).value = v if sparse else fluid.LoDTensor(v)
        names.append(name)
    out = block.create_var(name="out", shape=[5, 2], dtype="float64")
    block.append_op("sum", {"X": names}, {"Out": [out]})
    exe = fluid.Executor(fluid.CPUPlace())
    return exe.run(main, fetch_list=["out"], scope=scope)[0]


def test_sum_dense_plus_selected_rows():
    dense = r(5, 2)
    sr = SelectedRows([1, 3, 1], 5, r(3, 2))
    got = _run_sum([dense, sr])
    np.testing.assert_allclose(got, dense + sr.to_dense())
    # the repeated row 1 is added twice
    expected_row1 = dense[1] + sr.value[0] + sr.value[2]
    np.testing.assert_allclose(got[1], expected_row1)


def test_sum_of_selected_rows_only():
    a = SelectedRows([0, 4], 5, r(2, 2))
    b = SelectedRows([4], 5, r(1, 2))
    got = _run_sum([a, b])
    np.testing.assert_allclose(got, a.to_dense() + b.to_dense())


def test_sum_of_selected_rows_stays_sparse():
    from oar_kernels_cpu.kernels.math import sum_

    a = SelectedRows([0, 4], 5, r(2, 2))
    b = SelectedRows([2], 5, r(1, 2))
    out = sum_({"X": [a, b]}, {})["Out"]
    assert isinstance(out, SelectedRows)
    assert out.rows() == [0, 4, 2] and out.height() == 5


def test_sum_mismatched_shapes_refused():
    from oar import fluid

    with fluid.program_guard(fluid.Program(), fluid.Program()):
        a = fluid.layers.data("a", shape=[3], dtype="float32")
        b = fluid.layers.data("b", shape=[4], dtype="float32")
        with pytest.raises(ValueError, match="X\\[1\\] has shape"):
            fluid.layers.sums([a, b])
