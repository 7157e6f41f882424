"""fluid.nets: op sequences as Fluid 1.8 builds them, shapes, and numbers against numpy."""

import numpy as np
import pytest
from oar import fluid


@pytest.fixture
def prog():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        yield main, startup


def _types(main):
    return [op.type for op in main.global_block().ops]


def _run(main, startup, feed, fetch):
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    return exe.run(main, feed=feed, fetch_list=fetch, scope=scope), scope


def test_simple_img_conv_pool(prog):
    main, _ = prog
    img = fluid.data("img", [None, 1, 28, 28])
    out = fluid.nets.simple_img_conv_pool(
        img, num_filters=20, filter_size=5, pool_size=2, pool_stride=2, conv_padding=2, act="relu"
    )
    assert _types(main) == ["conv2d", "elementwise_add", "relu", "pool2d"]
    assert out.shape == (-1, 20, 14, 14)


def test_img_conv_group_matches_fluid_op_sequence(prog):
    main, startup = prog
    img = fluid.data("img", [None, 3, 8, 8])
    out = fluid.nets.img_conv_group(
        img,
        [4, 4],
        2,
        conv_act="relu",
        conv_with_batchnorm=True,
        conv_batchnorm_drop_rate=[0.0, 0.5],
        pool_stride=2,
    )
    assert _types(main) == [
        "conv2d",
        "elementwise_add",
        "batch_norm",
        "relu",
        "conv2d",
        "elementwise_add",
        "batch_norm",
        "relu",
        "dropout",
        "pool2d",
    ]
    assert out.shape == (-1, 4, 4, 4)
    (y,), _ = _run(main, startup, {"img": np.random.rand(2, 3, 8, 8).astype("float32")}, [out])
    assert y.shape == (2, 4, 4, 4)


def test_img_conv_group_list_length_mismatch(prog):
    img = fluid.data("img", [None, 3, 8, 8])
    with pytest.raises(ValueError, match="conv_padding has 3 entries"):
        fluid.nets.img_conv_group(img, [4, 4], 2, conv_padding=[1, 1, 1])


def _softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _qkv(seed):
    """Values and data variables of queries [2, 5, 8], keys [2, 6, 8] and values [2, 6, 4]."""
    rng = np.random.default_rng(seed)
    shapes = {"q": (5, 8), "k": (6, 8), "v": (6, 4)}
    values = tuple(rng.standard_normal((2, *s)).astype("float32") for s in shapes.values())
    return values, tuple(fluid.data(n, [None, *s]) for n, s in shapes.items())


def test_attention_single_head_numbers(prog):
    main, startup = prog
    (qv, kv, vv), (q, k, v) = _qkv(0)
    out = fluid.nets.scaled_dot_product_attention(q, k, v)
    assert out.shape == (-1, 5, 4)
    (got,), _ = _run(main, startup, {"q": qv, "k": kv, "v": vv}, [out])
    expected = _softmax(qv @ kv.transpose(0, 2, 1) / np.sqrt(8)) @ vv
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_attention_shape_errors(prog):
    q, k = fluid.data("q", [None, 5, 8]), fluid.data("k", [None, 6, 8])
    with pytest.raises(ValueError, match="same length"):
        fluid.nets.scaled_dot_product_attention(q, k, fluid.data("v", [None, 7, 4]))
    with pytest.raises(ValueError, match="divisible by num_heads=3"):
        fluid.nets.scaled_dot_product_attention(q, k, fluid.data("v2", [None, 6, 4]), num_heads=3)
    with pytest.raises(ValueError, match="3-D"):
        fluid.nets.scaled_dot_product_attention(fluid.data("q2", [None, 8]), k, k)


def test_glu_numbers(prog):
    main, startup = prog
    x = fluid.data("x", [None, 6, 4])
    out = fluid.nets.glu(x, dim=1)
    assert _types(main) == ["split", "sigmoid", "elementwise_mul"]
    xv = np.random.default_rng(1).standard_normal((2, 6, 4)).astype("float32")
    (got,), _ = _run(main, startup, {"x": xv}, [out])
    np.testing.assert_allclose(got, xv[:, :3] / (1 + np.exp(-xv[:, 3:])), rtol=1e-5, atol=1e-6)


def test_glu_odd_dim_refused(prog):
    with pytest.raises(ValueError, match="must be even"):
        fluid.nets.glu(fluid.data("x", [None, 5]), dim=-1)


def test_attention_multi_head_numbers(prog):
    main, startup = prog
    (qv, kv, vv), (q, k, v) = _qkv(2)
    out = fluid.nets.scaled_dot_product_attention(q, k, v, num_heads=2)
    assert out.shape == (-1, 5, 4)
    assert _types(main)[:9] == ["mul", "elementwise_add"] * 3 + [
        "reshape2",
        "transpose2",
        "reshape2",
    ]
    (got,), scope = _run(main, startup, {"q": qv, "k": kv, "v": vv}, [out])
    params = [
        np.asarray(scope.find_var(p.name).value) for p in main.global_block().all_parameters()
    ]
    (wq, bq, wk, bk, wv, bv) = params

    def heads(x, w, b):
        y = x @ w + b
        return y.reshape(2, y.shape[1], 2, -1).transpose(0, 2, 1, 3)

    qh, kh, vh = heads(qv, wq, bq), heads(kv, wk, bk), heads(vv, wv, bv)
    ctx = _softmax(qh @ kh.transpose(0, 1, 3, 2) * 4**-0.5) @ vh
    np.testing.assert_allclose(
        got, ctx.transpose(0, 2, 1, 3).reshape(2, 5, 4), rtol=1e-4, atol=1e-5
    )


def test_attention_op_sequence_matches_fluid(prog):
    main, _ = prog
    q, k, v = (
        fluid.data("q", [None, 5, 8]),
        fluid.data("k", [None, 6, 8]),
        fluid.data("v", [None, 6, 4]),
    )
    fluid.nets.scaled_dot_product_attention(q, k, v, num_heads=2, dropout_rate=0.1)
    # as printed by Fluid 1.8.5 for the same call
    assert _types(main) == ["mul", "elementwise_add"] * 3 + ["reshape2", "transpose2"] * 3 + [
        "scale",
        "matmul",
        "reshape2",
        "softmax",
        "reshape2",
        "dropout",
        "matmul",
        "transpose2",
        "reshape2",
    ]
    ops = main.global_block().ops
    assert ops[12].attrs["scale"] == 0.5 and ops[13].attrs["transpose_Y"] is True
