"""slice/strided_slice/gather/gather_nd/scatter/pad/pad2d vs numpy, with numeric gradient checks."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(4)


def r(*shape):
    return rng.uniform(-1, 1, shape)


X = r(3, 4, 2)
IMG = r(1, 2, 3, 4)


def _np_pad2d(X, paddings, mode="constant", pad_value=0.0, data_format="NCHW", **_):
    t, b, left, right = paddings
    width = (
        [(0, 0), (0, 0), (t, b), (left, right)]
        if data_format == "NCHW"
        else [(0, 0), (t, b), (left, right), (0, 0)]
    )
    if mode == "constant":
        return {"Out": np.pad(X, width, constant_values=pad_value)}
    return {"Out": np.pad(X, width, mode={"reflect": "reflect", "edge": "edge"}[mode])}


def _scatter_ref(X, Ids, Updates, overwrite=True):
    out = X.copy()
    if overwrite:
        for i, u in zip(Ids, Updates):
            out[i] = u
    else:
        out[Ids] = 0
        for i, u in zip(Ids, Updates):
            out[i] += u
    return {"Out": out}


CASES = [
    OpCase(
        "slice",
        {"Input": X},
        {"axes": [0, 1], "starts": [1, -3], "ends": [10, 3]},
        ref=lambda Input, **_: {"Out": Input[1:, 1:3]},
        grad=["Input"],
    ),
    OpCase(
        "slice",
        {"Input": X},
        {"axes": [0], "starts": [1], "ends": [2], "decrease_axis": [0]},
        ref=lambda Input, **_: {"Out": Input[1]},
        grad=["Input"],
        name="decrease",
    ),
    OpCase(
        "slice",
        {
            "Input": X,
            "StartsTensor": np.array([0, 1], "int32"),
            "EndsTensor": np.array([2, 4], "int32"),
        },
        {"axes": [0, 1], "starts": [-1, -1], "ends": [-1, -1]},
        ref=lambda Input, **_: {"Out": Input[0:2, 1:4]},
        grad=["Input"],
        name="tensors",
    ),
    OpCase(
        "strided_slice",
        {"Input": X},
        {"axes": [1, 2], "starts": [0, 1], "ends": [4, 2], "strides": [2, 1]},
        ref=lambda Input, **_: {"Out": Input[:, 0:4:2, 1:2]},
        grad=["Input"],
    ),
    OpCase(
        "strided_slice",
        {"Input": X},
        {"axes": [1], "starts": [3], "ends": [0], "strides": [-1]},
        ref=lambda Input, **_: {"Out": Input[:, 3:0:-1]},
        grad=["Input"],
        name="negative",
    ),
    OpCase(
        "strided_slice",
        {"Input": X},
        {"axes": [0, 1], "starts": [2, -1], "ends": [-1, -6], "strides": [-1, -2]},
        ref=lambda Input, **_: {"Out": Input[2::-1, ::-2]},
        grad=["Input"],
        name="to_first",
    ),
    OpCase(
        "gather",
        {"X": X, "Index": np.array([2, 0, 2], "int32")},
        {"overwrite": False},  # repeated rows: the accumulated gradient is the numeric one
        ref=lambda X, Index, **_: {"Out": X[Index]},
        grad=["X"],
    ),
    OpCase(
        "gather",
        {"X": r(3, 2), "Index": np.array([[1], [1]], "int64")},
        {"overwrite": False},
        ref=lambda X, Index, **_: {"Out": X[Index[:, 0]]},
        grad=["X"],
        name="nx1",
    ),
    OpCase(
        "gather_nd",
        {"X": X, "Index": np.array([[0, 1], [2, 3], [0, 1]], "int64")},
        ref=lambda X, Index: {"Out": X[Index[:, 0], Index[:, 1]]},
        grad=["X"],
    ),
    OpCase(
        "gather_nd",
        {"X": X, "Index": np.array([[[1, 2, 0]], [[2, 0, 1]]], "int32")},
        ref=lambda X, Index: {"Out": X[Index[..., 0], Index[..., 1], Index[..., 2]]},
        grad=["X"],
        name="full",
    ),
    OpCase(
        "scatter",
        {"X": r(4, 2), "Ids": np.array([1, 3], "int64"), "Updates": r(2, 2)},
        ref=_scatter_ref,
        grad=["X", "Updates"],
    ),
    OpCase(
        "scatter",
        {"X": r(4, 2), "Ids": np.array([1, 3, 1], "int64"), "Updates": r(3, 2)},
        {"overwrite": False},
        ref=_scatter_ref,
        grad=["X", "Updates"],
        name="accumulate",
    ),
    OpCase(
        "scatter",
        {"X": r(4, 2), "Ids": np.array([1, 3, 1], "int64"), "Updates": r(3, 2)},
        {"overwrite": True},
        ref=_scatter_ref,
        grad=["X", "Updates"],
        name="repeated_overwrite",
    ),
    OpCase(
        "pad",
        {"X": r(2, 3)},
        {"paddings": [0, 1, 2, 0], "pad_value": 0.5},
        ref=lambda X, paddings, pad_value: {
            "Out": np.pad(X, [(0, 1), (2, 0)], constant_values=pad_value)
        },
        grad=["X"],
    ),
    OpCase(
        "pad2d", {"X": IMG}, {"paddings": [1, 0, 2, 1], "pad_value": 1.5}, ref=_np_pad2d, grad=["X"]
    ),
    OpCase(
        "pad2d",
        {"X": IMG},
        {"paddings": [1, 2, 2, 3], "mode": "reflect"},
        ref=_np_pad2d,
        grad=["X"],
        name="reflect",
    ),
    OpCase(
        "pad2d",
        {"X": IMG},
        {"paddings": [2, 1, 0, 3], "mode": "edge"},
        ref=_np_pad2d,
        grad=["X"],
        name="edge",
    ),
    OpCase(
        "pad2d",
        {"X": r(1, 3, 4, 2)},
        {"paddings": [1, 1, 2, 0], "mode": "reflect", "data_format": "NHWC"},
        ref=_np_pad2d,
        grad=["X"],
        name="nhwc",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_indexing(case):
    check_case(case)


def test_gather_index_out_of_range_fails():
    from oar.testing import run_forward

    with pytest.raises(Exception, match="out of range"):
        run_forward(OpCase("gather", {"X": X, "Index": np.array([3], "int64")}))


@pytest.mark.parametrize("overwrite", [True, False])
def test_gather_grad_of_repeated_rows_follows_fluid(overwrite):
    """Fluid 1.8.5 (index [0, 0, 1], upstream grad [[1, 2], [10, 20], [100, 200]]):
    overwrite=True gives row 0 the last use's gradient [10, 20]; False sums to [11, 22]."""
    from oar import fluid

    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [3, 2])
        x.stop_gradient = False
        idx = fluid.data("idx", [3], dtype="int64")
        out = fluid.layers.gather(x, idx, overwrite=overwrite)
        w = fluid.layers.assign(np.array([[1.0, 2.0], [10.0, 20.0], [100.0, 200.0]], "float32"))
        loss = fluid.layers.reduce_sum(out * w)
        (g,) = fluid.gradients([loss], [x])
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {"x": np.ones((3, 2), "float32"), "idx": np.array([0, 0, 1], "int64")}
    (got,) = exe.run(main, feed=feed, fetch_list=[g])
    row0 = [10.0, 20.0] if overwrite else [11.0, 22.0]
    np.testing.assert_array_equal(got, [row0, [100.0, 200.0], [0.0, 0.0]])
