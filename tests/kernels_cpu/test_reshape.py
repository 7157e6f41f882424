"""reshape2: Fluid's 0 (copy the input dim) and -1 (infer) rules, and its gradient."""

import numpy as np
import pytest
from oar.ops.reshape import resolve_shape
from oar.testing import OpCase, check_case

rng = np.random.default_rng(4)


def _ref(target):
    return lambda X, **_: {"Out": X.reshape(target)}


def case(shape, attr_shape, target, name, **kw):
    return OpCase(
        "reshape2",
        {"X": rng.uniform(-1, 1, shape)},
        {"shape": attr_shape},
        ref=_ref(target),
        grad=["X"],
        grad_outputs=["Out"],
        name=name,
        **kw,
    )


CASES = [
    case((2, 3, 4), [6, 4], (6, 4), "plain"),
    case((2, 3, 4), [0, -1], (2, 12), "zero-and-minus-one"),
    case((2, 3, 4), [-1, 0, 2], (4, 3, 2), "minus-one-first"),
    case((2, 6), [0, 2, 3], (2, 2, 3), "zero-copies-dim0"),
    case((4,), [2, 2], (2, 2), "1d"),
    OpCase(
        "reshape2",
        {"X": np.arange(6, dtype="int64")},
        {"shape": [3, -1]},
        ref=_ref((3, 2)),
        outputs={"Out": 1},
        name="int64-no-xshape",
    ),
    OpCase(
        "reshape2",
        {"X": np.arange(6, dtype="float32"), "Shape": np.array([2, 3], "int32")},
        {"shape": [-1]},
        ref=lambda X, Shape, **_: {"Out": X.reshape(2, 3)},
        outputs={"Out": 1},
        name="shape-tensor",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_reshape(case):
    check_case(case)


@pytest.mark.parametrize(
    "in_shape, shape, expected",
    [
        ([2, 3, 4], [0, -1], [2, 12]),
        ([-1, 3, 4], [0, -1], [-1, -1]),  # as Fluid 1.8: the copied -1 leaves the rest unknown
        ([-1, 3, 4], [-1, 12], [-1, 12]),
        ([2, 3], [0, 0], [2, 3]),
        ([6], [-1, 2], [3, 2]),
    ],
)
def test_resolve_shape(in_shape, shape, expected):
    assert resolve_shape(in_shape, shape) == expected


@pytest.mark.parametrize(
    "in_shape, shape, msg",
    [
        ([2, 3], [-1, -1], "more than one -1"),
        ([2, 3], [4, -1], "cannot reshape"),
        ([2, 3], [5], "cannot reshape"),
        ([2], [0, 0], "has 0 at dim 1"),
    ],
)
def test_resolve_shape_errors(in_shape, shape, msg):
    with pytest.raises(ValueError, match=msg):
        resolve_shape(in_shape, shape)


def test_reshape_layer_bad_shape_names_op_and_line():
    from oar import fluid

    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", shape=[2, 3, 4], dtype="float32", append_batch_size=False)
        with pytest.raises(ValueError, match="reshape2") as info:
            fluid.layers.reshape(x, shape=[0, 5])
    assert "test_reshape.py" in str(info.value)


def test_reshape_output_is_a_view():
    from oar.testing import run_forward

    x = np.arange(12, dtype="float32")
    got = run_forward(OpCase("reshape2", {"X": x}, {"shape": [3, 4]}, outputs={"Out": 1}))["Out"][0]
    np.testing.assert_array_equal(got, x.reshape(3, 4))
