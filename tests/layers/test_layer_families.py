"""Static layers and their dygraph.nn classes share one argument normaliser per family.

So for the same arguments they build the same op with the same attrs. The conv op
choices below were recorded from Fluid 1.8.5 (static ``layers.conv2d`` /
``conv2d_transpose`` and dygraph ``Conv2D._l_type`` / ``Conv2DTranspose._op_type``
agree there) for channels C, filters F, groups g and use_cudnn False; with
use_cudnn True every case is the plain op.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from oar import fluid

# (C, F, g) whose op is depthwise with use_cudnn=False, per Fluid 1.8.5
DEPTHWISE_CONV = {(1, 1, 1), (1, 2, 1), (1, 4, 1), (1, 8, 1), (2, 2, 2), (2, 4, 2), (2, 8, 2)}
DEPTHWISE_CONV |= {(4, 4, 4), (4, 8, 4)}
DEPTHWISE_TRANSPOSE = {(1, 1, 1), (2, 2, 2), (4, 4, 4)}

CASES = [
    (c, f, g, cudnn)
    for c, f, g, cudnn in itertools.product([1, 2, 4], [1, 2, 4, 8], [None, 1, 2, 4], [True, False])
    if g is None or (c % g == 0 and f % g == 0)
]


def _static_ops(c, f, g, cudnn):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.data("x", [-1, c, 8, 8], "float32")
        fluid.layers.conv2d(x, f, 3, groups=g, use_cudnn=cudnn)
        fluid.layers.conv2d_transpose(x, f, filter_size=3, groups=g, use_cudnn=cudnn)
    return [
        (op.type, {k: op.attr(k) for k in ("strides", "paddings", "dilations", "groups")})
        for op in main.global_block().ops
        if "conv" in op.type
    ]


def _dygraph_ops(c, f, g, cudnn):
    ops = []
    with fluid.dygraph.guard():
        x = fluid.dygraph.to_variable(np.ones((1, c, 8, 8), "float32"))
        for cls in (fluid.dygraph.Conv2D, fluid.dygraph.Conv2DTranspose):
            layer = cls(c, f, 3, groups=g, use_cudnn=cudnn)
            layer(x)
            ops.append(
                (
                    layer._op_type,
                    {k: layer._attrs[k] for k in ("strides", "paddings", "dilations", "groups")},
                )
            )
    return ops


@pytest.mark.parametrize("c,f,g,cudnn", CASES)
def test_static_and_dygraph_conv_pick_the_same_op_as_fluid(c, f, g, cudnn):
    static = _static_ops(c, f, g, cudnn)
    assert static == _dygraph_ops(c, f, g, cudnn)
    want_conv = "depthwise_conv2d" if not cudnn and (c, f, g) in DEPTHWISE_CONV else "conv2d"
    want_t = "conv2d_transpose"
    if not cudnn and (c, f, g) in DEPTHWISE_TRANSPOSE:
        want_t = "depthwise_conv2d_transpose"
    assert [t for t, _ in static] == [want_conv, want_t]


def test_dygraph_conv_accepts_the_static_padding_forms():
    """One normaliser: dygraph.Conv2D takes what layers.conv2d takes ("SAME", 4 pads)."""
    with fluid.dygraph.guard():
        x = fluid.dygraph.to_variable(np.ones((1, 2, 7, 7), "float32"))
        assert fluid.dygraph.Conv2D(2, 3, 3, padding="SAME")(x).shape == [1, 3, 7, 7]
        assert fluid.dygraph.Conv2D(2, 3, 3, padding=[1, 0, 1, 0])(x).shape == [1, 3, 6, 6]


def _static_op(build, op_type):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        build()
    op = next(o for o in main.global_block().ops if o.type == op_type)
    return {k: op.attr(k) for k in op.attr_names if not k.startswith("op_")}


def _same_attrs(static: dict, dygraph: dict) -> None:
    # dygraph attrs are the normaliser's dict; the static op holds them completed
    assert {k: static[k] for k in dygraph} == dygraph


@pytest.mark.parametrize(
    "kw",
    [
        {"pool_size": 2, "pool_type": "max", "pool_stride": 2},
        {"pool_size": [3, 2], "pool_type": "avg", "pool_padding": "SAME", "exclusive": False},
        {"global_pooling": True, "pool_type": "avg"},
        {"pool_size": 3, "pool_padding": [1, 0, 1, 0], "ceil_mode": True},
    ],
)
def test_static_pool2d_and_dygraph_pool2d_build_the_same_op(kw):
    static = _static_op(
        lambda: fluid.layers.pool2d(fluid.data("x", [-1, 2, 6, 6], "float32"), **kw), "pool2d"
    )
    with fluid.dygraph.guard():
        _same_attrs(static, fluid.dygraph.Pool2D(**kw)._attrs)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"momentum": 0.5, "epsilon": 1e-3, "data_layout": "NHWC"},
        {"use_global_stats": True, "is_test": True},
    ],
)
def test_static_batch_norm_and_dygraph_batchnorm_build_the_same_op(kw):
    static = _static_op(
        lambda: fluid.layers.batch_norm(fluid.data("x", [-1, 3, 4, 3], "float32"), **kw),
        "batch_norm",
    )
    with fluid.dygraph.guard():
        layer = fluid.dygraph.BatchNorm(3, **kw)
    _same_attrs(static, layer._attrs)
    assert layer._mean.trainable is False and layer._variance.trainable is False


@pytest.mark.parametrize(
    "kw",
    [{}, {"padding_idx": -1}, {"padding_idx": 3, "is_sparse": True}],
)
def test_static_embedding_and_dygraph_embedding_build_the_same_op(kw):
    static = _static_op(
        lambda: fluid.layers.embedding(fluid.data("ids", [-1, 1], "int64"), [10, 4], **kw),
        "lookup_table",
    )
    with fluid.dygraph.guard():
        _same_attrs(static, fluid.dygraph.Embedding([10, 4], **kw)._attrs)


@pytest.mark.parametrize(
    "layer,bad,word",
    [
        (lambda: fluid.dygraph.Pool2D(2, pool_type="min"), "pool_type", "'min'"),
        (lambda: fluid.dygraph.BatchNorm(3, momentum=2.0), "momentum", "2.0"),
        (lambda: fluid.dygraph.Embedding([10, 4], padding_idx=10), "padding_idx", "10"),
        (lambda: fluid.dygraph.Conv2D(3, 4, 3, stride=0), "stride", "[0, 0]"),
    ],
)
def test_dygraph_classes_refuse_what_the_static_layers_refuse(layer, bad, word):
    with fluid.dygraph.guard(), pytest.raises(ValueError) as info:
        layer()
    assert bad in str(info.value) and word in str(info.value)
