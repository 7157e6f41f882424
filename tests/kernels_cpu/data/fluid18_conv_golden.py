"""Conv / pool / norm layer outputs from the real Fluid 1.8.5, as golden data for oar's tests.

``build(fluid)`` builds the same programs with either framework from the same
seeded inputs and weights. Regenerate the data with the oracle:
``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_conv_golden.py``
(writes ``fluid18_conv_golden.npz`` next to this file).
"""

import os

import numpy as np


def build(fluid):
    """Returns (main, startup, feed, fetch list); weights come from one seeded RandomState."""
    rng = np.random.RandomState(0)
    xv = rng.rand(2, 4, 8, 7).astype("float32")
    xhv = rng.rand(2, 8, 7, 4).astype("float32")

    def w(shape):
        init = fluid.initializer.NumpyArrayInitializer(rng.rand(*shape).astype("float32") - 0.5)
        return fluid.ParamAttr(initializer=init)

    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [2, 4, 8, 7])
        xh = fluid.data("xh", [2, 8, 7, 4])
        outs = [
            L.conv2d_transpose(
                x,
                3,
                filter_size=3,
                stride=2,
                padding="SAME",
                param_attr=w((4, 3, 3, 3)),
                bias_attr=False,
            ),
            L.conv2d_transpose(
                x,
                3,
                filter_size=4,
                stride=2,
                padding=[1, 2, 0, 1],
                param_attr=w((4, 3, 4, 4)),
                bias_attr=False,
            ),
            L.conv2d_transpose(
                x,
                4,
                filter_size=3,
                stride=2,
                output_size=[17, 16],
                groups=2,
                param_attr=w((4, 2, 3, 3)),
                bias_attr=False,
            ),
            L.pool2d(x, 3, pool_stride=2, pool_padding="SAME", pool_type="avg"),
            L.pool2d(x, 3, pool_stride=2, pool_padding="SAME", pool_type="max"),
            L.conv2d(
                xh,
                6,
                3,
                stride=2,
                padding="SAME",
                data_format="NHWC",
                param_attr=w((6, 4, 3, 3)),
                bias_attr=False,
            ),
            L.conv2d(
                x, 6, 3, dilation=2, padding="SAME", param_attr=w((6, 4, 3, 3)), bias_attr=False
            ),
            L.conv2d(
                x, 8, 3, groups=4, use_cudnn=False, param_attr=w((8, 1, 3, 3)), bias_attr=False
            ),
            L.lrn(x, n=3, k=1.5, alpha=0.3),
            L.batch_norm(xh, data_layout="NHWC"),
            L.adaptive_pool2d(x, [3, 4], "max"),
            L.adaptive_pool2d(x, [3, 4], "max", require_index=True)[1],
            L.resize_bilinear(x, out_shape=[5, 11], align_corners=False, align_mode=0),
            L.resize_bilinear(x, scale=1.5),
            L.resize_nearest(x, out_shape=[12, 5], align_corners=False),
            L.image_resize(xh, out_shape=[4, 9], resample="NEAREST", data_format="NHWC"),
            L.pool2d(x, 3, "avg", 2, pool_padding=1, ceil_mode=True, exclusive=False),
            L.adaptive_pool2d(x, [3, 5], "avg"),
        ]
    return main, startup, {"x": xv, "xh": xhv}, outs


if __name__ == "__main__":
    import paddle.fluid as fluid

    main, startup, feed, outs = build(fluid)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    res = exe.run(main, feed=feed, fetch_list=outs)
    np.savez(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_conv_golden.npz"), *res
    )
