"""ONNX export, op by op: each supported op round-trips through onnx.checker and onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

L = fluid.layers
POS = {"log", "sqrt", "rsqrt", "reciprocal", "pow"}


def _data(name, spec):
    """A batch of ``spec[0]`` (or exactly ``spec[0]`` when ``spec[3]`` is true)."""
    shape = list(spec[0]) if len(spec) > 3 and spec[3] else [None, *spec[0]]
    return fluid.data(name=name, shape=shape, dtype=spec[1])


def _case(id, build, feeds, n=2):
    return pytest.param(build, feeds, n, id=id)


def _x(shape, kind="normal"):
    return {"x": (shape, "float32", kind)}


def act(name, **kw):
    return _case(
        name,
        lambda v: getattr(L, name)(v["x"], **kw),
        _x([3, 4], "pos" if name in POS else "normal"),
    )


def ew(name, yshape, axis, xshape=(3, 4, 5)):
    def build(v):
        return getattr(L, name)(v["x"], v["y"], axis=axis)

    return _case(
        f"{name}-y{list(yshape)}-axis{axis}",
        build,
        {"x": (list(xshape), "float32", "pos"), "y": (list(yshape), "float32", "pos", True)},
    )


def _reduce(name, dim, keep):
    return lambda v: getattr(L, name)(v["x"], dim=dim, keep_dim=keep)


def _param(shape, seed=0):
    init = np.random.default_rng(seed).standard_normal(shape).astype("float32")
    return fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(init))


CASES = [
    _case("mul-fc", lambda v: L.fc(v["x"], 6, act="relu"), _x([5])),
    _case("mul-fc-3d", lambda v: L.fc(v["x"], 6, num_flatten_dims=2), _x([3, 5])),
    _case("mul-fc-4d-flatten", lambda v: L.fc(v["x"], 6), _x([2, 3, 3])),
    _case(
        "matmul",
        lambda v: L.matmul(v["x"], v["y"]),
        {"x": ([3, 4], "float32", "normal"), "y": ([4, 5], "float32", "normal")},
    ),
    _case(
        "matmul-transpose-alpha",
        lambda v: L.matmul(v["x"], v["y"], transpose_x=True, transpose_y=True, alpha=0.5),
        {"x": ([4, 3], "float32", "normal"), "y": ([5, 4], "float32", "normal")},
    ),
    _case(
        "conv2d",
        lambda v: L.conv2d(v["x"], 4, 3, padding=1, param_attr=_param([4, 2, 3, 3])),
        _x([2, 6, 6]),
    ),
    _case(
        "conv2d-stride-dilation-bias-act",
        lambda v: L.conv2d(v["x"], 4, 3, stride=2, dilation=2, padding=[1, 2], act="relu"),
        _x([2, 9, 9]),
    ),
    _case("conv2d-same", lambda v: L.conv2d(v["x"], 3, 3, stride=2, padding="SAME"), _x([2, 7, 7])),
    _case("conv2d-groups", lambda v: L.conv2d(v["x"], 4, 3, groups=2), _x([4, 5, 5])),
    _case("depthwise_conv2d", lambda v: L.conv2d(v["x"], 4, 3, groups=4, padding=1), _x([4, 5, 5])),
    _case(
        "conv2d_transpose",
        lambda v: L.conv2d_transpose(v["x"], 3, filter_size=3, stride=2, padding=1),
        _x([2, 4, 4]),
    ),
    _case("pool2d-max", lambda v: L.pool2d(v["x"], 2, "max", 2), _x([2, 6, 6])),
    _case(
        "pool2d-avg-pad-exclusive",
        lambda v: L.pool2d(v["x"], 3, "avg", 2, pool_padding=1),
        _x([2, 7, 7]),
    ),
    _case(
        "pool2d-avg-inclusive",
        lambda v: L.pool2d(v["x"], 3, "avg", 2, pool_padding=1, exclusive=False),
        _x([2, 7, 7]),
    ),
    _case("pool2d-ceil", lambda v: L.pool2d(v["x"], 2, "max", 2, ceil_mode=True), _x([2, 7, 7])),
    _case(
        "pool2d-global",
        lambda v: L.pool2d(v["x"], pool_type="avg", global_pooling=True),
        _x([2, 5, 5]),
    ),
    _case("adaptive_pool2d-1x1", lambda v: L.adaptive_pool2d(v["x"], 1, "max"), _x([2, 5, 5])),
    _case(
        "batch_norm",
        lambda v: L.batch_norm(v["x"], act="relu", param_attr=_param([3]), is_test=True),
        _x([3, 4, 4]),
    ),
    _case("layer_norm", lambda v: L.layer_norm(v["x"], begin_norm_axis=1), _x([3, 4])),
    _case(
        "layer_norm-axis2",
        lambda v: L.layer_norm(v["x"], begin_norm_axis=2, scale=False),
        _x([3, 4]),
    ),
    *(
        act(a)
        for a in [
            "relu",
            "sigmoid",
            "tanh",
            "exp",
            "log",
            "sqrt",
            "abs",
            "softplus",
            "softsign",
            "floor",
            "ceil",
            "reciprocal",
            "sin",
            "cos",
            "sign",
            "square",
            "rsqrt",
            "gelu",
        ]
    ),
    act("leaky_relu", alpha=0.1),
    act("elu", alpha=0.7),
    act("relu6", threshold=1.0),
    act("hard_sigmoid"),
    act("swish", beta=1.5),
    _case("softmax", lambda v: L.softmax(v["x"]), _x([3, 4])),
    _case("softmax-axis1", lambda v: L.softmax(v["x"], axis=1), _x([3, 4])),
    ew("elementwise_add", [4, 5], -1),
    ew("elementwise_add", [3], 1),
    ew("elementwise_add", [3, 4], 1),
    ew("elementwise_sub", [5], -1),
    ew("elementwise_mul", [3, 4], 1),
    ew("elementwise_div", [3, 4, 5], -1),
    ew("elementwise_max", [4, 5], -1),
    ew("elementwise_min", [3], 1),
    ew("elementwise_pow", [5], -1),
    _case(
        "elementwise_add-bias-param",
        lambda v: L.elementwise_add(
            v["x"],
            L.create_parameter([4], "float32", default_initializer=fluid.initializer.Constant(0.5)),
            axis=1,
        ),
        _x([4, 2, 2]),
    ),
    _case("reshape2", lambda v: L.reshape(v["x"], [0, -1, 2]), _x([3, 4])),
    _case("transpose2", lambda v: L.transpose(v["x"], [0, 2, 1]), _x([3, 4])),
    _case(
        "concat",
        lambda v: L.concat([v["x"], v["y"]], axis=-1),
        {"x": ([3, 2], "float32", "normal"), "y": ([3, 4], "float32", "normal")},
    ),
    _case("split-num", lambda v: L.split(v["x"], 2, dim=2)[1], _x([3, 4])),
    _case(
        "split-sections", lambda v: L.concat(L.split(v["x"], [1, -1], dim=1), axis=1), _x([3, 4])
    ),
    _case(
        "slice", lambda v: L.slice(v["x"], axes=[1, 2], starts=[1, 0], ends=[3, 100]), _x([3, 4])
    ),
    _case(
        "gather",
        lambda v: L.gather(v["x"], v["i"]),
        {"x": ([4], "float32", "normal"), "i": ([5], "int64", "index", True)},
        n=3,
    ),
    _case(
        "lookup_table",
        lambda v: L.embedding(v["i"], size=[10, 3], padding_idx=2),
        {"i": ([1], "int64", "ids")},
        n=6,
    ),
    _case(
        "lookup_table_v2",
        lambda v: fluid.embedding(v["i"], size=[10, 3]),
        {"i": ([3], "int64", "ids")},
        n=2,
    ),
    *(
        _case(
            f"{r}-dim{d}-keep{k}",
            _reduce(r, d, k),
            _x([3, 4], "pos"),
        )
        for r in ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"]
        for d, k in [([1], False), ([-1, 1], True)]
    ),
    _case("reduce_sum-all", lambda v: L.reduce_sum(v["x"]), _x([3, 4])),
    _case("mean", lambda v: L.mean(v["x"]), _x([3, 4])),
    _case("cast", lambda v: L.cast(v["x"], "int32"), _x([3])),
    _case("scale", lambda v: L.scale(v["x"], scale=2.0, bias=1.0), _x([3])),
    _case(
        "scale-bias-before",
        lambda v: L.scale(v["x"], scale=2.0, bias=1.0, bias_after_scale=False),
        _x([3]),
    ),
    _case("dropout-downgrade", lambda v: L.dropout(v["x"], 0.3, is_test=True), _x([3])),
    _case(
        "dropout-upscale",
        lambda v: L.dropout(v["x"], 0.3, is_test=True, dropout_implementation="upscale_in_train"),
        _x([3]),
    ),
    _case("flatten2", lambda v: L.flatten(v["x"], axis=2), _x([3, 4])),
    _case("squeeze2", lambda v: L.squeeze(v["x"], axes=[1]), _x([1, 4])),
    _case("unsqueeze2", lambda v: L.unsqueeze(v["x"], axes=[1, 3]), _x([4])),
    _case("stack", lambda v: L.stack([v["x"], v["x"]], axis=-1), _x([4])),
    _case("assign", lambda v: L.assign(v["x"]), _x([4])),
    _case("arg_max", lambda v: L.argmax(v["x"], axis=1), _x([4])),
    _case("expand", lambda v: L.expand(v["x"], [1, 2]), _x([3])),
    _case("clip", lambda v: L.clip(v["x"], -0.5, 0.5), _x([4])),
    _case("adaptive_pool2d-5to2", lambda v: L.adaptive_pool2d(v["x"], 2, "avg"), _x([2, 5, 5])),
    _case("lrn", lambda v: L.lrn(v["x"], n=3, k=1.0, alpha=1e-2, beta=0.75), _x([4, 3, 3])),
    _case("bilinear-align", lambda v: L.resize_bilinear(v["x"], [5, 7]), _x([2, 3, 4])),
    _case(
        "bilinear-half-pixel",
        lambda v: L.resize_bilinear(v["x"], [5, 7], align_corners=False, align_mode=0),
        _x([2, 3, 4]),
    ),
    _case(
        "bilinear-asymmetric-scale",
        lambda v: L.resize_bilinear(v["x"], scale=2.0, align_corners=False, align_mode=1),
        _x([2, 3, 4]),
    ),
    _case("nearest-align", lambda v: L.resize_nearest(v["x"], [5, 7]), _x([2, 3, 4])),
    _case(
        "nearest", lambda v: L.resize_nearest(v["x"], [6, 8], align_corners=False), _x([2, 3, 4])
    ),
    _case("sum", lambda v: L.sums([v["x"], v["x"], v["x"]]), _x([4])),
]


def _value(spec, n, rng):
    shape, dtype, kind = spec[:3]
    full = list(shape) if len(spec) > 3 and spec[3] else [n, *shape]
    if kind == "ids":
        return rng.integers(0, 10, full).astype(dtype)
    if kind == "index":
        return rng.integers(0, n, full).astype(dtype)
    if kind == "pos":
        return rng.uniform(0.5, 2.0, full).astype(dtype)
    return rng.standard_normal(full).astype(dtype)


@pytest.mark.parametrize("build, feeds, n", CASES)
def test_op_round_trip_through_onnxruntime(tmp_path, build, feeds, n):
    import oar.onnx

    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        inputs = {k: _data(k, spec) for k, spec in feeds.items()}
        out = build(inputs)
    test_prog = main.clone(for_test=True)
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    rng = np.random.default_rng(0)
    feed = {k: _value(spec, n, rng) for k, spec in feeds.items()}
    with fluid.scope_guard(scope):
        exe.run(startup)
        (want,) = exe.run(test_prog, feed=feed, fetch_list=[out])
    path = tmp_path / "m.onnx"
    oar.onnx.export(test_prog, list(feeds), [out], scope, str(path))
    onnx.checker.check_model(onnx.load(str(path)))
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (got,) = sess.run(None, feed)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
