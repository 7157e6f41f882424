"""Tensor-op layers: the ops Fluid 1.8 builds (type, attrs, inferred shapes), run results,
the Variable comparison operators, and refusal of impossible shapes/attributes."""

import numpy as np
import pytest
from oar import fluid

L = fluid.layers


def _x(name="x", shape=(3, 4), dtype="float32"):
    return L.data(name, list(shape), dtype=dtype, append_batch_size=False)


def _build(fn):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        out = fn()
    return main, startup, out


def _shapes(out):
    outs = out if isinstance(out, (list, tuple)) else [out]
    return [tuple(o.shape) for o in outs]


# (builder, last op type, attrs that must be set, output shapes) -- as the Fluid 1.8 oracle builds them
BUILDS = {
    "concat": (lambda: L.concat([_x(), _x("y")], axis=1), "concat", {"axis": 1}, [(3, 8)]),
    "split": (lambda: L.split(_x(), 2, dim=1), "split", {"num": 2, "axis": 1}, [(3, 2), (3, 2)]),
    "split_sections": (
        lambda: L.split(_x(), [1, -1], dim=1),
        "split",
        {"sections": [1, -1]},
        [(3, 1), (3, 3)],
    ),
    "stack": (lambda: L.stack([_x(), _x("y")], axis=1), "stack", {"axis": 1}, [(3, 2, 4)]),
    "unstack": (lambda: L.unstack(_x(), axis=1), "unstack", {"num": 4, "axis": 1}, [(3,)] * 4),
    "transpose": (lambda: L.transpose(_x(), [1, 0]), "transpose2", {"axis": [1, 0]}, [(4, 3)]),
    "squeeze": (lambda: L.squeeze(_x(shape=(3, 1)), [1]), "squeeze2", {"axes": [1]}, [(3,)]),
    "unsqueeze": (lambda: L.unsqueeze(_x(), [1]), "unsqueeze2", {"axes": [1]}, [(3, 1, 4)]),
    "flatten": (lambda: L.flatten(_x(shape=(2, 3, 4)), 2), "flatten2", {"axis": 2}, [(6, 4)]),
    "slice": (
        lambda: L.slice(_x(), axes=[1], starts=[1], ends=[3]),
        "slice",
        {"starts": [1], "ends": [3]},
        [(3, 2)],
    ),
    "strided_slice": (
        lambda: L.strided_slice(_x(), axes=[1], starts=[0], ends=[4], strides=[2]),
        "strided_slice",
        {"strides": [2]},
        [(3, 2)],
    ),
    "gather": (
        lambda: L.gather(_x(), _x("i", (2,), "int32")),
        "gather",
        {"overwrite": True},
        [(2, 4)],
    ),
    "gather_nd": (lambda: L.gather_nd(_x(), _x("i", (2, 2), "int32")), "gather_nd", {}, [(2,)]),
    "scatter": (
        lambda: L.scatter(_x(), _x("i", (2,), "int64"), _x("u", (2, 4))),
        "scatter",
        {"overwrite": True},
        [(3, 4)],
    ),
    "expand": (lambda: L.expand(_x(), [2, 1]), "expand", {"expand_times": [2, 1]}, [(6, 4)]),
    "expand_as": (lambda: L.expand_as(_x(), _x("t", (6, 8))), "expand_as", {}, [(6, 8)]),
    "pad": (
        lambda: L.pad(_x(), [0, 1, 1, 0], 0.5),
        "pad",
        {"paddings": [0, 1, 1, 0], "pad_value": 0.5},
        [(4, 5)],
    ),
    "pad2d": (
        lambda: L.pad2d(_x(shape=(1, 2, 3, 4)), [1, 1, 1, 1]),
        "pad2d",
        {"mode": "constant"},
        [(1, 2, 5, 6)],
    ),
    "topk": (lambda: L.topk(_x(), 2), "top_k", {"k": 2}, [(3, 2), (3, 2)]),
    "argmax": (lambda: L.argmax(_x(), 1), "arg_max", {"axis": 1}, [(3,)]),
    "argmin": (lambda: L.argmin(_x(), 1), "arg_min", {"axis": 1}, [(3,)]),
    "argsort": (
        lambda: L.argsort(_x(), 1),
        "argsort",
        {"axis": 1, "descending": False},
        [(3, 4), (3, 4)],
    ),
    "where": (lambda: L.where(_x(shape=(3,), dtype="bool")), "where_index", {}, [(-1, 1)]),
    "shape": (lambda: L.shape(_x()), "shape", {}, [(2,)]),
    "range": (lambda: L.range(0, 10, 2, "int32"), "range", {}, [(-1,)]),
    "linspace": (lambda: L.linspace(0, 1, 5, "float32"), "linspace", {}, [(-1,)]),
    "cumsum": (lambda: L.cumsum(_x(), axis=1), "cumsum", {"axis": 1, "exclusive": False}, [(3, 4)]),
    "clip": (lambda: L.clip(_x(), -1.0, 1.0), "clip", {"min": -1.0, "max": 1.0}, [(3, 4)]),
    "clip_by_norm": (
        lambda: L.clip_by_norm(_x(), 1.0),
        "clip_by_norm",
        {"max_norm": 1.0},
        [(3, 4)],
    ),
    "l2_normalize": (
        lambda: L.l2_normalize(_x(), 1),
        "norm",
        {"axis": 1, "epsilon": 1e-12},
        [(3, 4)],
    ),
    "uniform_random": (
        lambda: L.uniform_random([2, 3]),
        "uniform_random",
        {"min": -1.0, "max": 1.0},
        [(2, 3)],
    ),
    "gaussian_random": (
        lambda: L.gaussian_random([2, 3]),
        "gaussian_random",
        {"std": 1.0},
        [(2, 3)],
    ),
    "zeros_like": (lambda: L.zeros_like(_x()), "fill_zeros_like", {}, [(3, 4)]),
    "ones_like": (lambda: L.ones_like(_x()), "fill_any_like", {"value": 1.0}, [(3, 4)]),
    "increment": (lambda: L.increment(_x(shape=(1,)), 1.0), "increment", {"step": 1.0}, [(1,)]),
    "reduce_sum": (
        lambda: L.reduce_sum(_x(), dim=1, keep_dim=True),
        "reduce_sum",
        {"dim": [1], "keep_dim": True},
        [(3, 1)],
    ),
    "reduce_mean": (lambda: L.reduce_mean(_x()), "reduce_mean", {"reduce_all": True}, [(1,)]),
    "reduce_max": (
        lambda: L.reduce_max(_x(), dim=[0]),
        "reduce_max",
        {"dim": [0], "reduce_all": False},
        [(4,)],
    ),
    "reduce_prod": (lambda: L.reduce_prod(_x(), dim=-1), "reduce_prod", {"dim": [-1]}, [(3,)]),
    "less_than": (lambda: L.less_than(_x(), _x("y")), "less_than", {"axis": -1}, [(3, 4)]),
    "not_equal": (lambda: L.not_equal(_x(), _x("y")), "not_equal", {}, [(3, 4)]),
    "logical_and": (
        lambda: L.logical_and(_x(dtype="bool"), _x("y", dtype="bool")),
        "logical_and",
        {},
        [(3, 4)],
    ),
    "logical_not": (lambda: L.logical_not(_x(dtype="bool")), "logical_not", {}, [(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_layer_builds_fluid_op(name):
    fn, op_type, attrs, shapes = BUILDS[name]
    main, _, out = _build(fn)
    op = main.global_block().ops[-1]
    assert op.type == op_type
    for k, v in attrs.items():
        assert op.attr(k) == v, (k, op.attr(k))
    assert _shapes(out) == shapes


def _run(main, startup, feed, fetch):
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    return exe.run(main, feed=feed, fetch_list=fetch, scope=scope)


def test_values_through_layers():
    x = np.arange(12, dtype="float32").reshape(3, 4)

    def net():
        a = _x()
        parts = L.split(a, [1, 3], dim=1)
        return [
            L.concat(parts[::-1], axis=1),
            L.transpose(a, [1, 0]),
            L.range(0, 10, 3, "int64"),
            L.linspace(0.0, 1.0, 3, "float32"),
            L.cumsum(a, axis=0, reverse=True),
            L.argmax(a, axis=1),
            L.where(a > 5.0),
            L.shape(a),
            L.slice(a, axes=[0, 1], starts=[-2, 0], ends=[10000, 2]),
            L.clip(a, 2.0, 4.0),
            L.reduce_sum(a, dim=[0, 1]),
        ]

    main, startup, outs = _build(net)
    got = _run(main, startup, {"x": x}, outs)
    np.testing.assert_array_equal(got[0], np.concatenate([x[:, 1:], x[:, :1]], 1))
    np.testing.assert_array_equal(got[1], x.T)
    np.testing.assert_array_equal(got[2], [0, 3, 6, 9])
    np.testing.assert_allclose(got[3], [0, 0.5, 1])
    np.testing.assert_array_equal(got[4], np.flip(np.cumsum(np.flip(x, 0), 0), 0))
    np.testing.assert_array_equal(got[5], [3, 3, 3])
    np.testing.assert_array_equal(got[6], np.argwhere(x > 5))
    np.testing.assert_array_equal(got[7], [3, 4])
    np.testing.assert_array_equal(got[8], x[1:, :2])
    np.testing.assert_array_equal(got[9], np.clip(x, 2, 4))
    np.testing.assert_array_equal(got[10], [x.sum()])


def test_variable_comparison_operators_route_to_compare_ops():
    def net():
        a, b = _x(), _x("y")
        return [a < b, a <= b, a > b, a >= b, a < 1.5]

    main, startup, outs = _build(net)
    assert [op.type for op in main.global_block().ops if op.type != "fill_constant"] == [
        "less_than",
        "less_equal",
        "greater_than",
        "greater_equal",
        "less_than",
    ]
    x = np.array([[1, 2, 3, 4]] * 3, "float32")
    y = np.full((3, 4), 2, "float32")
    got = _run(main, startup, {"x": x, "y": y}, outs)
    for g, e in zip(got, [x < y, x <= y, x > y, x >= y, x < 1.5]):
        assert g.dtype == np.bool_
        np.testing.assert_array_equal(g, e)


def test_increment_in_place_counter():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        counter = L.create_global_var([1], 0, "int64", persistable=True, name="step")
        L.increment(counter, 2.0)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    for _ in range(3):
        exe.run(main, scope=scope)
    assert np.array(scope.find_var("step").get_tensor())[0] == 6


def test_random_layers_respect_bounds_and_seed():
    main, startup, outs = _build(
        lambda: [
            L.uniform_random([200], min=2.0, max=3.0, seed=5),
            L.gaussian_random([200], mean=10.0, std=0.1, seed=5),
        ]
    )
    u, g = _run(main, startup, {}, outs)
    assert u.dtype == np.float32 and (u >= 2).all() and (u < 3).all()
    assert abs(g.mean() - 10) < 0.1
    u2, _ = _run(main, startup, {}, outs)
    np.testing.assert_array_equal(u, u2)


def test_gradients_flow_through_tensor_layers():
    def net():
        a = _x()
        a.stop_gradient = False
        y = L.concat([L.transpose(a, [1, 0]), L.expand(L.slice(a, [1], [0], [3]), [1, 1])], axis=0)
        loss = L.reduce_sum(L.gather(L.flatten(y, 1), L.assign(np.array([0, 2], "int32"))))
        return fluid.gradients([loss], [a])[0]

    main, startup, g = _build(net)
    (got,) = _run(main, startup, {"x": np.ones((3, 4), "float32")}, [g])
    # rows 0 and 2 of [x^T (4x3); x[:, 0:3] (3x3)] are x^T rows 0 and 2: columns 0 and 2 of x
    expected = np.zeros((3, 4), "float32")
    expected[:, 0] = 1
    expected[:, 2] = 1
    np.testing.assert_array_equal(got, expected)


BAD = [
    (lambda: L.concat([_x(), _x("y", (4, 4))], axis=1), ValueError, "differ at dim 0"),
    (lambda: L.concat([_x(), _x("y", (3, 4), "int64")]), TypeError, "dtype"),
    (lambda: L.concat([_x()], axis=2), ValueError, "axis"),
    (lambda: L.split(_x(), 3, dim=1), ValueError, "not divisible"),
    (lambda: L.split(_x(), [1, 2], dim=1), ValueError, "sum to 3"),
    (lambda: L.split(_x(), 2, dim=5), ValueError, "dim 5"),
    (lambda: L.stack([_x(), _x("y", (3, 5))]), ValueError, "equal shapes"),
    (lambda: L.unstack(_x(), axis=3), ValueError, "axis"),
    (lambda: L.transpose(_x(), [0, 0]), ValueError, "permutation"),
    (lambda: L.transpose(_x(), [1, 0, 2]), ValueError, "one entry per dim"),
    (lambda: L.squeeze(_x(), [0]), ValueError, "not 1"),
    (lambda: L.unsqueeze(_x(), []), ValueError, "empty"),
    (lambda: L.flatten(_x(), 3), ValueError, "axis"),
    (lambda: L.slice(_x(), axes=[2], starts=[0], ends=[1]), ValueError, "out of range"),
    (lambda: L.slice(_x(), axes=[0], starts=[0, 1], ends=[1]), ValueError, "one entry per axis"),
    (
        lambda: L.strided_slice(_x(), axes=[0], starts=[0], ends=[1], strides=[0]),
        ValueError,
        "strides",
    ),
    (
        lambda: L.strided_slice(_x(), axes=[1], starts=[1], ends=[3], strides=[-1]),
        ValueError,
        "select nothing",
    ),
    (lambda: L.gather(_x(), _x("i", (2,), "float32")), TypeError, "Index must be int"),
    (lambda: L.gather_nd(_x(), _x("i", (2, 3), "int32")), ValueError, "exceeds X's rank"),
    (lambda: L.scatter(_x(), _x("i", (2,), "int64"), _x("u", (2, 5))), ValueError, "Updates shape"),
    (lambda: L.expand(_x(), [2]), ValueError, "one entry per dim"),
    (lambda: L.expand(_x(), [2, 0]), ValueError, "positive"),
    (lambda: L.expand_as(_x(), _x("t", (4, 4))), ValueError, "not a multiple"),
    (lambda: L.pad(_x(), [1, 1]), ValueError, "2 \\* rank"),
    (lambda: L.pad2d(_x(), [1, 1, 1, 1]), ValueError, "4-D"),
    (lambda: L.pad2d(_x(shape=(1, 1, 2, 2)), [2, 0, 0, 0], mode="reflect"), ValueError, "reflect"),
    (lambda: L.pad2d(_x(shape=(1, 1, 2, 2)), mode="wrap"), ValueError, "mode"),
    (lambda: L.argmax(_x(), 2), ValueError, "axis"),
    (lambda: L.argsort(_x(), -3), ValueError, "axis"),
    (lambda: L.where(_x()), TypeError, "bool"),
    (lambda: L.range(0, 10, 0, "int32"), ValueError, "step"),
    (lambda: L.linspace(0, 1, 0, "float32"), ValueError, "num"),
    (lambda: L.cumsum(_x(), axis=2), ValueError, "axis"),
    (lambda: L.clip(_x(), 1.0, -1.0), ValueError, "min"),
    (lambda: L.clip_by_norm(_x(), 0.0), ValueError, "max_norm"),
    (lambda: L.l2_normalize(_x(), 3), ValueError, "axis"),
    (lambda: L.uniform_random([2, -1]), ValueError, "shape"),
    (lambda: L.uniform_random([2], min=1.0, max=0.0), ValueError, "min"),
    (lambda: L.gaussian_random([2], dtype="int64"), TypeError, "float"),
    (lambda: L.increment(_x()), ValueError, "one element"),
    (lambda: L.reduce_sum(_x(), dim=2), ValueError, "out of range"),
    (lambda: L.reduce_mean(_x(), dim=[0, -2]), ValueError, "twice"),
    (lambda: L.reduce_all(_x()), TypeError, "bool"),
    (lambda: L.less_than(_x(), _x("y", (3, 5))), ValueError, "mismatch"),
    (lambda: L.equal(_x(), _x("y", dtype="int64")), TypeError, "dtype"),
    (lambda: L.logical_and(_x(), _x("y")), TypeError, "bool"),
    (lambda: L.concat("x"), TypeError, "concat: argument .input"),
]


@pytest.mark.parametrize("fn, exc, match", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_input(fn, exc, match):
    with pytest.raises(exc, match=match):
        _build(fn)


def test_variable_valued_arguments():
    """starts/ends, sections, expand_times, axes, axis and depth may be Variables (run-time values)."""
    x = np.arange(12, dtype="float32").reshape(3, 4)

    def net():
        a = _x()
        two = L.fill_constant([1], "int32", 2)
        one64 = L.fill_constant([1], "int64", 1)
        return [
            L.slice(a, axes=[1], starts=[two], ends=[4]),
            L.split(a, [two, -1], dim=1)[1],
            L.expand(a, [1, two]),
            L.unsqueeze(a, [two]),
            L.concat([a, a], axis=L.fill_constant([1], "int32", 0)),
            L.one_hot(
                L.reshape(L.cast(L.argmax(a, 1), "int64"), [-1, 1]),
                depth=L.fill_constant([1], "int32", 5),
            ),
            L.uniform_random(L.assign(np.array([2, 3], "int64"))),
            L.strided_slice(a, axes=[0], starts=[one64], ends=[3], strides=[2]),
            L.gaussian_random([two, 3, one64]),
        ]

    main, startup, outs = _build(net)
    got = _run(main, startup, {"x": x}, outs)
    np.testing.assert_array_equal(got[0], x[:, 2:])
    np.testing.assert_array_equal(got[1], x[:, 2:])
    np.testing.assert_array_equal(got[2], np.tile(x, (1, 2)))
    assert got[3].shape == (3, 4, 1)
    np.testing.assert_array_equal(got[4], np.concatenate([x, x], 0))
    np.testing.assert_array_equal(got[5], np.eye(5, dtype="float32")[[3, 3, 3]])
    assert got[6].shape == (2, 3)
    np.testing.assert_array_equal(got[7], x[1:3:2])
    assert got[8].shape == (2, 3, 1)
