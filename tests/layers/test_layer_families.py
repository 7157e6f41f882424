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
