"""pool2d / max_pool2d_with_index: forward vs a per-window numpy reference, numeric gradients."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(0)


def r(*shape):
    # distinct values, well separated, so max pooling has no near-ties for the numeric gradient
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) / n * 2 - 1).astype("float64")


def pool_ref(
    X,
    ksize=None,
    pooling_type="max",
    strides=(1, 1),
    paddings=(0, 0),
    global_pooling=False,
    ceil_mode=False,
    exclusive=True,
    adaptive=False,
    data_format="NCHW",
    **_,
):
    """Loop over output cells (clear, slow): Fluid's window and divisor rules."""
    x = X.transpose(0, 3, 1, 2) if data_format == "NHWC" else X
    n, c, h, w = x.shape
    p = list(paddings)
    t, b, left, right = p if len(p) == 4 else (p[0], p[0], p[1], p[1])
    if global_pooling:
        ksize, strides, t, b, left, right = (h, w), (1, 1), 0, 0, 0, 0
    kh, kw = ksize
    if adaptive:
        oh, ow = kh, kw
    else:
        rnd = (lambda a, s: -(-a // s)) if ceil_mode else (lambda a, s: a // s)
        oh = rnd(h + t + b - kh, strides[0]) + 1
        ow = rnd(w + left + right - kw, strides[1]) + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            if adaptive:
                h0, h1 = i * h // oh, -(-(i + 1) * h // oh)
                w0, w1 = j * w // ow, -(-(j + 1) * w // ow)
            else:
                h0, w0 = i * strides[0] - t, j * strides[1] - left
                h1, w1 = min(h0 + kh, h), min(w0 + kw, w)
                h0, w0 = max(h0, 0), max(w0, 0)
            cell = x[:, :, h0:h1, w0:w1]
            if pooling_type == "max":
                out[:, :, i, j] = cell.max(axis=(2, 3))
            else:
                div = cell.shape[2] * cell.shape[3] if (exclusive or adaptive) else kh * kw
                out[:, :, i, j] = cell.sum(axis=(2, 3)) / div
    if data_format == "NHWC":
        out = out.transpose(0, 2, 3, 1)
    return {"Out": out}


def _case(shape, name, **attrs):
    attrs.setdefault("ksize", [2, 2])
    return OpCase("pool2d", {"X": r(*shape)}, attrs, ref=pool_ref, grad=["X"], name=name)


CASES = [
    _case((2, 2, 4, 4), "max", strides=[2, 2]),
    _case((1, 2, 5, 5), "max_pad_stride", ksize=[3, 3], strides=[2, 2], paddings=[1, 1]),
    _case((1, 2, 5, 5), "max_ceil", ksize=[2, 2], strides=[2, 2], ceil_mode=True),
    _case((1, 2, 5, 4), "avg", pooling_type="avg", ksize=[3, 2], strides=[1, 2]),
    _case(
        (1, 1, 5, 5),
        "avg_pad_ceil_exclusive",
        pooling_type="avg",
        ksize=[3, 3],
        strides=[2, 2],
        paddings=[1, 1],
        ceil_mode=True,
    ),
    _case(
        (1, 1, 5, 5),
        "avg_pad_ceil_inclusive",
        pooling_type="avg",
        ksize=[3, 3],
        strides=[2, 2],
        paddings=[1, 1],
        ceil_mode=True,
        exclusive=False,
    ),
    _case(
        (1, 1, 5, 5),
        "avg_pad4",
        pooling_type="avg",
        ksize=[2, 2],
        strides=[2, 2],
        paddings=[1, 0, 0, 1],
    ),
    _case((2, 3, 3, 4), "global_max", global_pooling=True, ksize=[1, 1]),
    _case((2, 3, 3, 4), "global_avg", pooling_type="avg", global_pooling=True, ksize=[1, 1]),
    _case((1, 2, 6, 4), "adaptive_even_avg", pooling_type="avg", adaptive=True, ksize=[3, 2]),
    _case((1, 2, 5, 5), "adaptive_uneven_avg", pooling_type="avg", adaptive=True, ksize=[3, 2]),
    _case((1, 2, 5, 5), "adaptive_uneven_max", adaptive=True, ksize=[3, 2]),
    # adaptive output larger than the input: overlapping windows (Fluid allows it)
    _case((1, 2, 2, 3), "adaptive_upsample_avg", pooling_type="avg", adaptive=True, ksize=[3, 5]),
    _case((1, 2, 2, 3), "adaptive_upsample_max", adaptive=True, ksize=[3, 5]),
    _case((1, 4, 4, 2), "nhwc", data_format="NHWC", strides=[2, 2]),
]


def _with_index_ref(X, ksize, strides=(1, 1), paddings=(0, 0), adaptive=False, **_):
    out = pool_ref(X, ksize, "max", strides, paddings, adaptive=adaptive)["Out"]
    n, c, h, w = X.shape
    flat = X.reshape(n, c, -1)
    mask = np.argmax(flat[:, :, None, None, :] == out[..., None], axis=-1)
    return {"Out": out, "Mask": mask.astype("int32")}


CASES += [
    OpCase(
        "max_pool2d_with_index",
        {"X": r(1, 2, 4, 4)},
        {"ksize": [2, 2], "strides": [2, 2]},
        ref=_with_index_ref,
        grad=["X"],
        grad_outputs=["Out"],
        name="regular",
    ),
    OpCase(
        "max_pool2d_with_index",
        {"X": r(1, 2, 5, 5)},
        {"ksize": [3, 2], "adaptive": True},
        ref=_with_index_ref,
        grad=["X"],
        grad_outputs=["Out"],
        name="adaptive",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_pool(case):
    check_case(case)


@pytest.mark.parametrize("ksize,strides", [([2, 2], [2, 2]), ([3, 3], [2, 2]), ([2, 3], [2, 3])])
def test_max_pool_grad_ties_go_to_first_maximum(ksize, strides):
    """Fluid routes a tied window's gradient to its first maximum (row-major); relu zeros tie often."""
    from oar import fluid

    x = rng.integers(0, 2, (2, 2, 6, 6)).astype("float64")
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        xv = fluid.data("x", [2, 2, 6, 6], "float64")
        xv.stop_gradient = False
        y = fluid.layers.pool2d(xv, ksize, "max", strides)
        (g,) = fluid.gradients([y], [xv])  # d sum(y) / dx
    got = fluid.Executor(fluid.CPUPlace()).run(
        main, feed={"x": x}, fetch_list=[g], scope=fluid.Scope()
    )[0]
    expected = np.zeros_like(x)
    oh = (6 - ksize[0]) // strides[0] + 1
    ow = (6 - ksize[1]) // strides[1] + 1
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * strides[0], j * strides[1]
            cell = x[:, :, h0 : h0 + ksize[0], w0 : w0 + ksize[1]].reshape(2, 2, -1)
            first = cell.argmax(axis=2)
            for a in range(2):
                for b in range(2):
                    expected[a, b, h0 + first[a, b] // ksize[1], w0 + first[a, b] % ksize[1]] += 1
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("require_index", [False, True])
def test_uneven_adaptive_max_grad_ties_go_to_first_maximum(require_index):
    from oar import fluid

    x = rng.integers(0, 2, (2, 3, 7, 5)).astype("float64")
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        xv = fluid.data("x", [2, 3, 7, 5], "float64")
        xv.stop_gradient = False
        y = fluid.layers.adaptive_pool2d(xv, [3, 2], "max", require_index=require_index)
        y = y[0] if require_index else y
        (g,) = fluid.gradients([y], [xv])
    got = fluid.Executor(fluid.CPUPlace()).run(
        main, feed={"x": x}, fetch_list=[g], scope=fluid.Scope()
    )[0]
    expected = np.zeros_like(x)
    for i in range(3):
        h0, h1 = i * 7 // 3, -(-(i + 1) * 7 // 3)
        for j in range(2):
            w0, w1 = j * 5 // 2, -(-(j + 1) * 5 // 2)
            cell = x[:, :, h0:h1, w0:w1].reshape(2, 3, -1)
            first = cell.argmax(axis=2)
            for a in range(2):
                for b in range(3):
                    expected[a, b, h0 + first[a, b] // (w1 - w0), w0 + first[a, b] % (w1 - w0)] += 1
    np.testing.assert_array_equal(got, expected)
