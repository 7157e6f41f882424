"""Differential tests against PyTorch CPU: conv2d, conv2d_transpose, pool2d, batch_norm, layer_norm (+ grads)."""

import numpy as np
import pytest
from oar import fluid

try:  # the oracle is optional: without it every test here is reported skipped, one by one
    import torch

    F = torch.nn.functional
except ImportError:
    torch = F = None
pytestmark = pytest.mark.skipif(
    torch is None, reason="PyTorch CPU oracle not installed: pip install torch==2.13.0"
)
rng = np.random.default_rng(0)


def _program(op_type, inputs, attrs, out_slot, grad_slots, extra_outputs, dout_shape=None):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        block = main.global_block()
        vars_ = {
            slot: block.create_var(
                name=slot.lower(),
                shape=arr.shape,
                dtype=arr.dtype.name,
                is_data=True,
                stop_gradient=slot not in grad_slots,
            )
            for slot, arr in inputs.items()
        }
        outs = {
            s: [block.create_var(name=f"out_{s.lower()}")]
            for s in (out_slot,) + tuple(extra_outputs)
        }
        block.append_op(op_type, {s: [v] for s, v in vars_.items()}, outs, attrs)
        grads = []
        if dout_shape is not None:
            dout = block.create_var(
                name="dout", shape=dout_shape, dtype="float64", is_data=True, stop_gradient=True
            )
            grads = fluid.gradients(
                [outs[out_slot][0]], [vars_[s] for s in grad_slots], target_gradients=[dout]
            )
    return main, [g.name for g in grads]


def run_op(op_type, inputs, attrs, out_slot, grad_slots=(), extra_outputs=(), fetch_extra=False):
    """Run one op on float64 inputs; returns (output, {slot: d(sum(out * dout))/d input}, dout)
    (and {slot: value} of ``extra_outputs`` with ``fetch_extra``)."""
    exe = fluid.Executor(fluid.CPUPlace())
    feeds = {slot.lower(): arr for slot, arr in inputs.items()}
    fwd, _ = _program(op_type, inputs, attrs, out_slot, (), extra_outputs)
    probe = {
        k: v.copy() for k, v in feeds.items()
    }  # the op may update its inputs in place (batch_norm)
    (y,) = exe.run(fwd, feed=probe, fetch_list=[f"out_{out_slot.lower()}"], scope=fluid.Scope())
    d = rng.uniform(0.5, 1.5, y.shape)
    main, grad_names = _program(
        op_type, inputs, attrs, out_slot, grad_slots, extra_outputs, y.shape
    )
    extra = [f"out_{s.lower()}" for s in extra_outputs] if fetch_extra else []
    fetched = exe.run(
        main,
        feed=dict(feeds, dout=d),
        fetch_list=[f"out_{out_slot.lower()}"] + grad_names + extra,
        scope=fluid.Scope(),
    )
    grads = dict(zip(grad_slots, fetched[1 : 1 + len(grad_names)]))
    if fetch_extra:
        return fetched[0], grads, d, dict(zip(extra_outputs, fetched[1 + len(grad_names) :]))
    return fetched[0], grads, d


def torch_grads(fn, arrays, d):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    y = fn(*ts)
    (y * torch.tensor(d)).sum().backward()
    return y.detach().numpy(), [t.grad.numpy() for t in ts]


@pytest.mark.parametrize(
    "stride,padding,dilation,groups",
    [
        (1, 0, 1, 1),
        (2, 1, 1, 1),
        (1, 2, 2, 1),
        (2, 1, 1, 2),
        (1, 1, 1, 4),
    ],
)
def test_conv2d_vs_torch(stride, padding, dilation, groups):
    x = rng.standard_normal((2, 4, 9, 8))
    w = rng.standard_normal((8, 4 // groups, 3, 3))
    y, g, d = run_op(
        "conv2d",
        {"Input": x, "Filter": w},
        {
            "strides": [stride] * 2,
            "paddings": [padding] * 2,
            "dilations": [dilation] * 2,
            "groups": groups,
        },
        "Output",
        ("Input", "Filter"),
    )
    ty, (gx, gw) = torch_grads(
        lambda a, b: F.conv2d(
            a, b, stride=stride, padding=padding, dilation=dilation, groups=groups
        ),
        [x, w],
        d,
    )
    np.testing.assert_allclose(y, ty, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(g["Input"], gx, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(g["Filter"], gw, rtol=1e-10, atol=1e-10)


def test_conv2d_float32_vs_torch():
    x = rng.standard_normal((4, 3, 12, 12)).astype("float32")
    w = rng.standard_normal((5, 3, 5, 5)).astype("float32")
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        xv = fluid.data("x", [4, 3, 12, 12])
        wv = main.global_block().create_var(name="w", shape=w.shape, dtype="float32", is_data=True)
        out = main.global_block().create_var(name="o")
        main.global_block().append_op(
            "conv2d", {"Input": [xv], "Filter": [wv]}, {"Output": [out]}, {"paddings": [2, 2]}
        )
    (y,) = fluid.Executor(fluid.CPUPlace()).run(
        main, feed={"x": x, "w": w}, fetch_list=["o"], scope=fluid.Scope()
    )
    assert y.dtype == np.float32
    np.testing.assert_allclose(
        y, F.conv2d(torch.tensor(x), torch.tensor(w), padding=2).numpy(), rtol=1e-4, atol=1e-4
    )


@pytest.mark.parametrize(
    "stride,padding,dilation,groups,out_pad",
    [
        (1, 0, 1, 1, 0),
        (2, 1, 1, 1, 1),
        (2, 0, 2, 2, 0),
        (3, 1, 1, 1, 2),
    ],
)
def test_conv2d_transpose_vs_torch(stride, padding, dilation, groups, out_pad):
    x = rng.standard_normal((2, 4, 5, 4))
    w = rng.standard_normal((4, 6 // groups, 3, 3))
    ty0 = F.conv_transpose2d(
        torch.tensor(x),
        torch.tensor(w),
        stride=stride,
        padding=padding,
        output_padding=out_pad,
        groups=groups,
        dilation=dilation,
    )
    y, g, d = run_op(
        "conv2d_transpose",
        {"Input": x, "Filter": w},
        {
            "strides": [stride] * 2,
            "paddings": [padding] * 2,
            "dilations": [dilation] * 2,
            "groups": groups,
            "output_size": list(ty0.shape[2:]) if out_pad else [],
        },
        "Output",
        ("Input", "Filter"),
    )
    ty, (gx, gw) = torch_grads(
        lambda a, b: F.conv_transpose2d(
            a,
            b,
            stride=stride,
            padding=padding,
            output_padding=out_pad,
            groups=groups,
            dilation=dilation,
        ),
        [x, w],
        d,
    )
    np.testing.assert_allclose(y, ty, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(g["Input"], gx, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(g["Filter"], gw, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    "ptype,k,s,p,ceil,exclusive",
    [
        ("max", 2, 2, 0, False, True),
        ("max", 3, 2, 1, True, True),
        ("max", 3, 1, 1, False, True),
        ("avg", 2, 2, 0, False, True),
        ("avg", 3, 2, 1, False, False),
        ("avg", 3, 2, 1, True, True),
        ("avg", 3, 2, 1, False, True),
    ],
)
def test_pool2d_vs_torch(ptype, k, s, p, ceil, exclusive):
    x = rng.permutation(2 * 3 * 9 * 9).reshape(2, 3, 9, 9).astype("float64") / 100  # no ties
    y, g, d = run_op(
        "pool2d",
        {"X": x},
        {
            "pooling_type": ptype,
            "ksize": [k, k],
            "strides": [s, s],
            "paddings": [p, p],
            "ceil_mode": ceil,
            "exclusive": exclusive,
        },
        "Out",
        ("X",),
    )
    if ptype == "max":
        fn = lambda a: F.max_pool2d(a, k, s, p, ceil_mode=ceil)
    else:
        fn = lambda a: F.avg_pool2d(a, k, s, p, ceil_mode=ceil, count_include_pad=not exclusive)
    ty, (gx,) = torch_grads(fn, [x], d)
    np.testing.assert_allclose(y, ty, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g["X"], gx, rtol=1e-10, atol=1e-12)


def test_adaptive_pool_vs_torch():
    x = rng.standard_normal((2, 3, 7, 9))
    for ptype, fn in (("avg", F.adaptive_avg_pool2d), ("max", F.adaptive_max_pool2d)):
        y, g, d = run_op(
            "pool2d",
            {"X": x},
            {"pooling_type": ptype, "ksize": [3, 4], "adaptive": True},
            "Out",
            ("X",),
        )
        ty, (gx,) = torch_grads(lambda a: fn(a, (3, 4)), [x], d)  # noqa: B023
        np.testing.assert_allclose(y, ty, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g["X"], gx, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("is_test", [False, True])
def test_batch_norm_vs_torch(is_test):
    c = 3
    x = rng.standard_normal((4, c, 5, 5)) * 2 + 1
    scale, bias = rng.uniform(0.5, 1.5, c), rng.standard_normal(c)
    mean, var = rng.standard_normal(c), rng.uniform(0.5, 1.5, c)
    tm, tv = torch.tensor(mean), torch.tensor(var)
    y, g, d = run_op(
        "batch_norm",
        {"X": x, "Scale": scale, "Bias": bias, "Mean": mean.copy(), "Variance": var.copy()},
        {"is_test": is_test, "momentum": 0.9, "epsilon": 1e-5},
        "Y",
        ("X", "Scale", "Bias"),
        extra_outputs=("MeanOut", "VarianceOut", "SavedMean", "SavedVariance"),
    )
    ty, (gx, gs, gb) = torch_grads(
        lambda a, s_, b_: F.batch_norm(
            a, tm.clone(), tv.clone(), s_, b_, training=not is_test, momentum=0.1, eps=1e-5
        ),
        [x, scale, bias],
        d,
    )
    np.testing.assert_allclose(y, ty, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(g["X"], gx, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(g["Scale"], gs, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(g["Bias"], gb, rtol=1e-9, atol=1e-10)


def test_batch_norm_moving_mean_vs_torch():
    x = rng.standard_normal((6, 2, 3, 3))
    *_, extra = run_op(
        "batch_norm",
        {
            "X": x,
            "Scale": np.ones(2),
            "Bias": np.zeros(2),
            "Mean": np.zeros(2),
            "Variance": np.ones(2),
        },
        {"momentum": 0.9},
        "Y",
        extra_outputs=("MeanOut", "VarianceOut", "SavedMean", "SavedVariance"),
        fetch_extra=True,
    )
    mean, var = extra["MeanOut"], extra["VarianceOut"]
    tm, tv = torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)
    F.batch_norm(torch.tensor(x), tm, tv, training=True, momentum=0.1)
    np.testing.assert_allclose(mean, tm.numpy(), rtol=1e-10)
    # Fluid (like oar) moves the variance with the biased batch variance; torch uses the unbiased one
    m = x.size // 2
    biased = x.var(axis=(0, 2, 3))
    np.testing.assert_allclose(var, 0.9 + 0.1 * biased, rtol=1e-10)
    np.testing.assert_allclose(tv.numpy(), 0.9 + 0.1 * biased * m / (m - 1), rtol=1e-10)


@pytest.mark.parametrize("axis", [1, 2])
def test_layer_norm_vs_torch(axis):
    x = rng.standard_normal((3, 4, 5))
    shape = x.shape[axis:]
    n = int(np.prod(shape))
    scale, bias = rng.uniform(0.5, 1.5, n), rng.standard_normal(n)
    y, g, d = run_op(
        "layer_norm",
        {"X": x, "Scale": scale, "Bias": bias},
        {"begin_norm_axis": axis},
        "Y",
        ("X", "Scale", "Bias"),
        extra_outputs=("Mean", "Variance"),
    )
    ty, (gx, gs, gb) = torch_grads(
        lambda a, s_, b_: F.layer_norm(a, shape, s_.reshape(shape), b_.reshape(shape), eps=1e-5),
        [x, scale, bias],
        d,
    )
    np.testing.assert_allclose(y, ty, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(g["X"], gx, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(g["Scale"], gs, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(g["Bias"], gb, rtol=1e-9, atol=1e-10)
