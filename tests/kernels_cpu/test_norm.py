"""batch_norm / layer_norm / lrn: forward vs numpy references and numeric gradient checks."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(0)


def r(*shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype("float64")


def bn_ref_factory(mean0, var0):
    """Reference over copies of the moving stats (the kernel updates the fed arrays in place)."""
    mean0, var0 = mean0.copy(), var0.copy()

    def ref(
        X,
        Scale,
        Bias,
        Mean,
        Variance,
        momentum=0.9,
        epsilon=1e-5,
        is_test=False,
        data_layout="NCHW",
        use_global_stats=False,
        **_,
    ):
        c_axis = X.ndim - 1 if data_layout == "NHWC" and X.ndim > 2 else 1
        axes = tuple(i for i in range(X.ndim) if i != c_axis)
        shape = [1] * X.ndim
        shape[c_axis] = -1
        if is_test or use_global_stats:
            m, v = mean0, var0
            mo, vo = mean0, var0
        else:
            m, v = X.mean(axis=axes), X.var(axis=axes)
            mo, vo = mean0 * momentum + m * (1 - momentum), var0 * momentum + v * (1 - momentum)
        y = (X - m.reshape(shape)) / np.sqrt(v.reshape(shape) + epsilon) * Scale.reshape(
            shape
        ) + Bias.reshape(shape)
        out = {"Y": y, "MeanOut": mo, "VarianceOut": vo}
        if not (is_test or use_global_stats):
            out.update(SavedMean=m, SavedVariance=1 / np.sqrt(v + epsilon))
        return out

    return ref


def _bn(shape, name, c_axis=1, **attrs):
    c = shape[c_axis]
    mean, var = r(c), r(c, low=0.5, high=1.5)
    return OpCase(
        "batch_norm",
        {
            "X": r(*shape),
            "Scale": r(c, low=0.5, high=1.5),
            "Bias": r(c),
            "Mean": mean,
            "Variance": var,
        },
        attrs,
        ref=bn_ref_factory(mean, var),
        grad=["X", "Scale", "Bias"],
        grad_outputs=["Y"],
        name=name,
    )


def ln_ref(X, Scale=None, Bias=None, begin_norm_axis=1, epsilon=1e-5, **_):
    left = int(np.prod(X.shape[:begin_norm_axis]))
    x2 = X.reshape(left, -1)
    m, v = x2.mean(1), x2.var(1)
    y = (x2 - m[:, None]) / np.sqrt(v[:, None] + epsilon)
    if Scale is not None:
        y = y * Scale.reshape(1, -1)
    if Bias is not None:
        y = y + Bias.reshape(1, -1)
    return {"Y": y.reshape(X.shape), "Mean": m, "Variance": v}


def lrn_ref(X, n=5, k=1.0, alpha=1e-4, beta=0.75, **_):
    pre = (n - 1) // 2
    c = X.shape[1]
    s = np.zeros_like(X)
    for ch in range(c):
        s[:, ch] = (X[:, max(ch - pre, 0) : min(ch - pre + n, c)] ** 2).sum(1)
    mid = k + alpha * s
    return {"Out": X * mid**-beta, "MidOut": mid}


CASES = [
    _bn((4, 3, 2, 2), "train"),
    _bn((4, 3), "train_2d", momentum=0.5),
    _bn((3, 2, 2, 3), "train_nhwc", c_axis=3, data_layout="NHWC"),
    _bn((2, 3, 2, 2), "is_test", is_test=True),
    _bn((2, 3, 2, 2), "use_global_stats", use_global_stats=True),
    OpCase(
        "layer_norm",
        {"X": r(3, 2, 4), "Scale": r(8, low=0.5, high=1.5), "Bias": r(8)},
        ref=ln_ref,
        grad=["X", "Scale", "Bias"],
        grad_outputs=["Y"],
        name="axis1",
    ),
    OpCase(
        "layer_norm",
        {"X": r(2, 3, 4), "Scale": r(4, low=0.5, high=1.5), "Bias": r(4)},
        {"begin_norm_axis": 2, "epsilon": 1e-3},
        ref=ln_ref,
        grad=["X", "Scale", "Bias"],
        grad_outputs=["Y"],
        name="axis2",
    ),
    OpCase(
        "layer_norm", {"X": r(3, 5)}, ref=ln_ref, grad=["X"], grad_outputs=["Y"], name="no_affine"
    ),
    OpCase(
        "lrn",
        {"X": r(2, 6, 2, 2)},
        {"n": 3, "k": 2.0, "alpha": 0.1, "beta": 0.75},
        ref=lrn_ref,
        grad=["X"],
        grad_outputs=["Out"],
        name="n3",
    ),
    OpCase(
        "lrn",
        {"X": r(1, 7, 2, 1)},
        {"n": 5, "k": 1.0, "alpha": 0.2},
        ref=lrn_ref,
        grad=["X"],
        grad_outputs=["Out"],
        name="n5",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_norm(case):
    check_case(case)


def test_batch_norm_updates_moving_stats_in_place():
    """The moving mean/variance arrays in the scope are updated in place, not replaced."""
    from oar import fluid

    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        xv = fluid.data("x", [8, 2, 3, 3])
        y = fluid.layers.batch_norm(
            xv, momentum=0.9, moving_mean_name="mm", moving_variance_name="mv"
        )
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)

    def array(name):
        v = scope.find_var(name).value
        return getattr(v, "_array", v)

    before = array("mm")
    x = r(8, 2, 3, 3).astype("float32")
    (out,) = exe.run(main, feed={"x": x}, fetch_list=[y], scope=scope)
    assert array("mm") is before
    np.testing.assert_allclose(before, 0.1 * x.mean(axis=(0, 2, 3)), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(array("mv"), 0.9 + 0.1 * x.var(axis=(0, 2, 3)), rtol=1e-5)
    assert out.dtype == np.float32 and before.dtype == np.float32
