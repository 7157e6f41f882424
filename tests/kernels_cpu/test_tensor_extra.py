"""flip, index_select, index_sample, meshgrid, allclose, randperm and the tensor-API layers
built on existing ops (nonzero, clamp, addcmul, arange, full, full_like, randn)."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case, run_forward

rng = np.random.default_rng(22)
X = rng.uniform(-1, 1, (3, 4))


def _index_sample(X, Index):
    return {"Out": np.take_along_axis(X, Index, 1)}


CASES = [
    OpCase("flip", {"X": X}, {"dims": [1]}, ref=lambda X, dims: {"Out": X[:, ::-1]}, grad=["X"]),
    OpCase(
        "flip",
        {"X": X},
        {"dims": [0, -1]},
        ref=lambda X, dims: {"Out": X[::-1, ::-1]},
        grad=["X"],
        name="both",
    ),
    OpCase(
        "index_select",
        {"X": X, "Index": np.array([2, 0, 2], "int64")},
        {"dim": 1},
        ref=lambda X, Index, dim: {"Out": X[:, Index]},
        grad=["X"],
    ),
    OpCase(
        "index_select",
        {"X": X, "Index": np.array([1, 1], "int32")},
        {"dim": 0},
        ref=lambda X, Index, dim: {"Out": X[Index]},
        grad=["X"],
        name="rows",
    ),
    OpCase(
        "index_sample",
        {"X": X, "Index": np.array([[0, 3], [1, 1], [2, 0]], "int64")},
        ref=_index_sample,
        grad=["X"],
    ),
    OpCase(
        "meshgrid",
        {"X": [rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 2)]},
        ref=lambda X: {"Out": list(np.meshgrid(*X, indexing="ij"))},
        outputs={"Out": 2},
        grad=["X"],
    ),
    OpCase(
        "allclose",
        {"Input": X, "Other": X + 1e-9},
        {"rtol": 1e-5, "atol": 1e-8, "equal_nan": False},
        ref=lambda **_: {"Out": np.array([True])},
    ),
    OpCase(
        "allclose",
        {"Input": X, "Other": X + 1e-3},
        {"rtol": 1e-5, "atol": 1e-8, "equal_nan": False},
        ref=lambda **_: {"Out": np.array([False])},
        name="far",
    ),
    OpCase("randperm", {}, {"n": 5, "dtype": "int64", "seed": 3}),  # values: test below
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_tensor_extra(case):
    check_case(case)


def test_randperm_is_a_permutation_and_seeded():
    case = OpCase("randperm", {}, {"n": 7, "dtype": "int64", "seed": 5})
    a = run_forward(case)["Out"][0]
    b = run_forward(case)["Out"][0]
    assert sorted(a.tolist()) == list(range(7)) and a.dtype == np.int64
    np.testing.assert_array_equal(a, b)


def test_composed_layers_in_dygraph_match_fluid():
    L = fluid.layers
    a = np.arange(6, dtype="float32").reshape(2, 3)
    with fluid.dygraph.guard():
        v = fluid.dygraph.to_variable
        # values Fluid 1.8.5 prints for the same calls
        assert L.nonzero(v(a)).numpy().tolist() == [[0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
        assert [t.shape for t in L.nonzero(v(a), as_tuple=True)] == [[5, 1], [5, 1]]
        assert L.clamp(v(a), min=1.0).numpy().tolist() == [[1, 1, 2], [3, 4, 5]]
        assert L.index_select(v(a), v(np.array([2, 0], "int64")), dim=1).numpy().tolist() == [
            [2, 0],
            [5, 3],
        ]
        assert L.flip(v(a), dims=[1]).numpy().tolist() == [[2, 1, 0], [5, 4, 3]]
        np.testing.assert_allclose(
            L.addcmul(v(a), v(a), v(np.full((2, 3), 2, "float32")), value=0.5).numpy(), 2 * a
        )
        assert L.arange(0, 5, 2).numpy().tolist() == [0, 2, 4]
        assert (
            str(L.arange(0, 5, 2).dtype).endswith("float32")
            or L.arange(0, 5, 2).numpy().dtype == np.float32
        )
        f = L.full([2], 3)
        assert f.numpy().tolist() == [3, 3] and f.numpy().dtype == np.float32
        fl = L.full_like(v(a), 2)
        assert fl.numpy().dtype == np.float32 and fl.numpy().sum() == 12
        assert L.randn([2, 3]).numpy().shape == (2, 3)
        p = L.randperm(5).numpy()
        assert sorted(p.tolist()) == [0, 1, 2, 3, 4] and p.dtype == np.int64
        assert L.elementwise_equal(v(a), v(a)).numpy().all()
        assert L.allclose(v(a), v(a)).numpy().tolist() == [True]
        m = L.meshgrid([v(a[0]), v(np.ones(2, "float32"))])
        assert [x.shape for x in m] == [[3, 2], [3, 2]]


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda L, d: L.flip(d([2, 3]), dims=[2]), "out of range"),
        (lambda L, d: L.index_select(d([2, 3]), fluid.data("i", [2], "float32")), "int32 or int64"),
        (
            lambda L, d: L.index_sample(d([2, 3]), fluid.data("j", [3, 1], "int64")),
            "same number of rows",
        ),
        (lambda L, d: L.meshgrid([d([2, 3])]), "1-D"),
        (lambda L, d: L.clamp(d([2])), "min, max"),
        (lambda L, d: L.randperm(0), "positive"),
        (lambda L, d: L.full([2, -1], 1.0), "non-negative"),
    ],
)
def test_bad_input_is_refused(build, match):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        names = iter("abcdefgh")

        def d(shape):
            return fluid.data(next(names), shape, "float32")

        with pytest.raises(OarError, match=match):
            build(fluid.layers, d)
