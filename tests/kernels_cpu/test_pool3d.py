"""pool3d (max/avg, ceil_mode, exclusive, global, adaptive): numeric gradients and PyTorch."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

torch = pytest.importorskip("torch")
F = torch.nn.functional
rng = np.random.default_rng(42)


def distinct(*shape):
    """Well-separated values: max pooling's argmax is stable under finite differences."""
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) / n * 2 - 1).astype("float64")


def _attrs(**kw):
    a = {
        "pooling_type": "max",
        "ksize": [2, 2, 2],
        "global_pooling": False,
        "strides": [1, 1, 1],
        "paddings": [0, 0, 0],
        "exclusive": True,
        "adaptive": False,
        "ceil_mode": False,
        "data_format": "NCDHW",
    }
    a.update(kw)
    return a


def _ref(
    X, pooling_type, ksize, strides, paddings, exclusive, adaptive, ceil_mode, global_pooling, **_
):
    t = torch.tensor(X)
    if global_pooling:
        ksize, strides, paddings = list(X.shape[2:]), [1, 1, 1], [0, 0, 0]
    if adaptive:
        fn = F.adaptive_max_pool3d if pooling_type == "max" else F.adaptive_avg_pool3d
        return {"Out": fn(t, ksize).numpy()}
    if pooling_type == "max":
        out = F.max_pool3d(t, ksize, strides, paddings, ceil_mode=ceil_mode)
    else:
        out = F.avg_pool3d(
            t, ksize, strides, paddings, ceil_mode=ceil_mode, count_include_pad=not exclusive
        )
    return {"Out": out.numpy()}


X = distinct(2, 2, 4, 5, 4)
CASES = [
    OpCase("pool3d", {"X": X}, _attrs(), ref=_ref, grad=["X"]),
    OpCase(
        "pool3d",
        {"X": X},
        _attrs(strides=[2, 2, 2], paddings=[1, 1, 0]),
        ref=_ref,
        grad=["X"],
        name="padded",
    ),
    OpCase(
        "pool3d",
        {"X": X},
        _attrs(pooling_type="avg", strides=[2, 2, 1], paddings=[1, 0, 1]),
        ref=_ref,
        grad=["X"],
        name="avg_exclusive",
    ),
    OpCase(
        "pool3d",
        {"X": X},
        _attrs(pooling_type="avg", strides=[2, 2, 1], paddings=[1, 0, 1], exclusive=False),
        ref=_ref,
        grad=["X"],
        name="avg_inclusive",
    ),
    OpCase(
        "pool3d",
        {"X": X},
        _attrs(ksize=[3, 2, 3], strides=[2, 2, 2], ceil_mode=True),
        ref=_ref,
        grad=["X"],
        name="ceil",
    ),
    OpCase(
        "pool3d",
        {"X": X},
        _attrs(global_pooling=True, pooling_type="avg"),
        ref=_ref,
        grad=["X"],
        name="global",
    ),
    OpCase(
        "pool3d",
        {"X": X},
        _attrs(adaptive=True, ksize=[3, 2, 3]),
        ref=_ref,
        grad=["X"],
        name="adaptive_max",
    ),
    OpCase(
        "pool3d",
        {"X": X},
        _attrs(adaptive=True, ksize=[3, 2, 3], pooling_type="avg"),
        ref=_ref,
        grad=["X"],
        name="adaptive_avg",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_pool3d(case):
    check_case(case)


def test_layers_and_ndhwc():
    x = rng.uniform(-1, 1, (2, 4, 4, 4, 3)).astype("float32")
    with fluid.dygraph.guard():
        v = fluid.dygraph.to_variable(x)
        got = fluid.layers.pool3d(v, 2, "avg", 2, data_format="NDHWC").numpy()
        ad = fluid.layers.adaptive_pool3d(
            fluid.dygraph.to_variable(x.transpose(0, 4, 1, 2, 3)), [2, 1, 3], "max"
        ).numpy()
    want = F.avg_pool3d(torch.tensor(x).permute(0, 4, 1, 2, 3), 2, 2).permute(0, 2, 3, 4, 1).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    want = F.adaptive_max_pool3d(torch.tensor(x).permute(0, 4, 1, 2, 3), (2, 1, 3)).numpy()
    np.testing.assert_allclose(ad, want, rtol=1e-6)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda L, x: L.pool3d(x), "pool_size must be given"),
        (lambda L, x: L.pool3d(x, 2, "min"), "pool_type"),
        (lambda L, x: L.pool3d(x, 9), "larger than"),
        (lambda L, x: L.adaptive_pool3d(x, [2, 2]), "3 ints"),
        (lambda L, x: L.adaptive_pool3d(x, 2, "avg", require_index=True), "require_index"),
    ],
)
def test_bad_input_is_refused(build, match):
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [2, 3, 4, 4, 4], "float32")
        with pytest.raises(OarError, match=match):
            build(fluid.layers, x)
