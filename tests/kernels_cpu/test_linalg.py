"""bmm, dot, cross, dist, kron, trace, addmm, diag_embed: numpy references and numeric
gradients; layer shapes against Fluid 1.8.5's."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

rng = np.random.default_rng(21)


def r(*shape):
    return rng.uniform(-1, 1, shape)


def _dist(X, Y, p):
    z = np.abs(X - Y).ravel()
    if p == 0:
        v = np.count_nonzero(z)
    elif np.isinf(p):
        v = z.max() if p > 0 else z.min()
    else:
        v = np.sum(z**p) ** (1 / p)
    return {"Out": np.array([v])}


def _diag_embed(Input, offset, dim1, dim2):
    n = Input.shape[-1]
    m = n + abs(offset)
    out = np.zeros(Input.shape[:-1] + (m, m))
    for i in range(n):
        out[..., i + max(-offset, 0), i + max(offset, 0)] = Input[..., i]
    return {"Out": np.moveaxis(out, (-2, -1), (dim1, dim2))}


X34 = r(3, 4)
CASES = [
    OpCase(
        "bmm",
        {"X": r(2, 3, 4), "Y": r(2, 4, 2)},
        ref=lambda X, Y: {"Out": X @ Y},
        grad=["X", "Y"],
    ),
    OpCase(
        "dot",
        {"X": X34, "Y": r(3, 4)},
        ref=lambda X, Y: {"Out": (X * Y).sum(1, keepdims=True)},
        grad=["X", "Y"],
    ),
    OpCase(
        "dot",
        {"X": r(5), "Y": r(5)},
        ref=lambda X, Y: {"Out": np.array([X @ Y])},
        grad=["X", "Y"],
        name="1d",
    ),
    OpCase(
        "cross",
        {"X": r(2, 3), "Y": r(2, 3)},
        {"dim": 1},
        ref=lambda X, Y, dim: {"Out": np.cross(X, Y, axis=1)},
        grad=["X", "Y"],
    ),
    OpCase(
        "cross",
        {"X": r(3, 2), "Y": r(3, 2)},
        ref=lambda X, Y: {"Out": np.cross(X, Y, axis=0)},
        grad=["X", "Y"],
        name="default_dim",
    ),
    OpCase("dist", {"X": X34, "Y": r(1, 4)}, {"p": 2.0}, ref=_dist, grad=["X", "Y"]),
    OpCase("dist", {"X": X34, "Y": r(3, 4)}, {"p": 3.0}, ref=_dist, grad=["X", "Y"], name="p3"),
    OpCase(
        "dist",
        {"X": X34, "Y": r(3, 4)},
        {"p": float("inf")},
        ref=_dist,
        grad=["X", "Y"],
        name="inf",
    ),
    OpCase("dist", {"X": X34, "Y": r(3, 4)}, {"p": 0.0}, ref=_dist, name="p0"),
    OpCase(
        "kron",
        {"X": r(2, 3), "Y": r(3, 2)},
        ref=lambda X, Y: {"Out": np.kron(X, Y)},
        grad=["X", "Y"],
    ),
    OpCase(
        "kron",
        {"X": r(2, 2, 3), "Y": r(2, 1)},
        ref=lambda X, Y: {"Out": np.kron(X, Y)},
        grad=["X", "Y"],
        name="rank",
    ),
    OpCase(
        "trace",
        {"Input": r(4, 3)},
        {"offset": -1, "dim1": 0, "dim2": 1},
        ref=lambda Input, **a: {"Out": np.array([np.trace(Input, -1)])},
        grad=["Input"],
    ),
    OpCase(
        "trace",
        {"Input": r(2, 3, 4)},
        {"offset": 1, "dim1": 2, "dim2": 1},
        ref=lambda Input, **a: {"Out": np.trace(Input, 1, axis1=2, axis2=1)},
        grad=["Input"],
        name="3d",
    ),
    OpCase(
        "addmm",
        {"Input": r(1, 2), "X": X34, "Y": r(4, 2)},
        {"Alpha": 2.0, "Beta": 0.5},
        ref=lambda Input, X, Y, Alpha, Beta: {"Out": Beta * Input + Alpha * X @ Y},
        grad=["Input", "X", "Y"],
    ),
    OpCase(
        "diag_embed",
        {"Input": r(2, 3)},
        {"offset": 1, "dim1": -2, "dim2": -1},
        ref=_diag_embed,
        grad=["Input"],
    ),
    OpCase(
        "diag_embed",
        {"Input": r(2, 3)},
        {"offset": -1, "dim1": 2, "dim2": 0},
        ref=_diag_embed,
        grad=["Input"],
        name="axes",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_linalg(case):
    check_case(case)


def test_layer_shapes_match_fluid():
    L = fluid.layers
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        a = fluid.data("a", [2, 3], "float32")
        b = fluid.data("b", [2, 3], "float32")
        x3 = fluid.data("x3", [2, 3, 4], "float32")
        # shapes Fluid 1.8.5 gives for the same calls
        assert L.dot(a, b).shape == (2, 1)
        assert L.dist(a, b).shape == (1,)
        assert L.trace(x3, offset=1, dim1=1, dim2=2).shape == (2,)
        assert L.trace(a).shape == (1,)
        assert L.t(a).shape == (3, 2)
        assert L.diag_embed(a, offset=1).shape == (2, 4, 4)
        assert L.kron(a, b).shape == (4, 9)
        assert L.bmm(x3, fluid.data("y3", [2, 4, 5], "float32")).shape == (2, 3, 5)
        assert L.cross(
            fluid.data("c", [3, 2], "float32"), fluid.data("d", [3, 2], "float32")
        ).shape == (3, 2)
        assert L.addmm(
            fluid.data("i", [2, 2], "float32"), a, fluid.data("e", [3, 2], "float32")
        ).shape == (2, 2)


def test_addmm_matches_fluid_in_dygraph():
    a = np.arange(6, dtype="float32").reshape(2, 3)
    with fluid.dygraph.guard():
        v = fluid.dygraph.to_variable
        got = fluid.layers.addmm(
            v(np.ones((2, 2), "float32")), v(a), v(np.ones((3, 2), "float32")), alpha=2.0, beta=0.5
        ).numpy()
    np.testing.assert_allclose(got, [[6.5, 6.5], [24.5, 24.5]])  # Fluid 1.8.5's output


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda L, d: L.bmm(d([2, 3]), d([2, 3])), "bmm"),
        (lambda L, d: L.dot(d([2, 3]), d([2, 4])), "dot"),
        (lambda L, d: L.cross(d([2, 4]), d([2, 4])), "size 3"),
        (lambda L, d: L.trace(d([2, 3]), dim1=1, dim2=1), "different"),
        (lambda L, d: L.t(d([2, 3, 4])), "at most 2"),
        (lambda L, d: L.addmm(d([2, 2]), d([2, 3]), d([4, 2])), "addmm"),
        (lambda L, d: L.dist(d([2, 3]), d([2, 4])), "broadcast"),
    ],
)
def test_bad_shapes_are_refused(build, match):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        names = iter("abcdefgh")

        def d(shape):
            return fluid.data(next(names), shape, "float32")

        with pytest.raises(OarError, match=match):
            build(fluid.layers, d)
