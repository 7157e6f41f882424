"""Golden data for group_norm / instance_norm: run with the Fluid 1.8.5 oracle.

    $FLUID18_PYTHON tests/kernels_cpu/data/fluid18_norm_extra.py

Writes fluid18_norm_extra.npz next to this file: inputs, parameters, Y and the
gradient of sum(Y * W) with respect to the input, scale and bias; for group_norm also the
Mean and Variance outputs. The ``gnu*`` cases have channels not divisible by groups (Fluid
1.8.5 uses groups of ceil(C / groups) channels, the last one smaller).
"""

import os

import numpy as np
import paddle.fluid as fluid

rng = np.random.RandomState(7)
out = {}


def run(tag, build, x, c):
    scale = rng.uniform(0.5, 1.5, c).astype("float32")
    bias = rng.uniform(-0.5, 0.5, c).astype("float32")
    w = rng.uniform(-1, 1, x.shape).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        xv = fluid.data("x", list(x.shape), "float32")
        xv.stop_gradient = False
        y = build(
            xv,
            fluid.ParamAttr(
                name=tag + "_s", initializer=fluid.initializer.NumpyArrayInitializer(scale)
            ),
            fluid.ParamAttr(
                name=tag + "_b", initializer=fluid.initializer.NumpyArrayInitializer(bias)
            ),
        )
        wv = fluid.layers.assign(w)
        loss = fluid.layers.reduce_sum(fluid.layers.elementwise_mul(y, wv))
        grads = fluid.gradients(
            [loss], [xv, main.global_block().var(tag + "_s"), main.global_block().var(tag + "_b")]
        )
    stats = []
    for op in main.global_block().ops:
        if op.type == "group_norm":
            stats = [op.output("Mean")[0], op.output("Variance")[0]]
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    res = exe.run(main, feed={"x": x}, fetch_list=[y] + grads + stats)
    keys = ("x", "scale", "bias", "w", "y", "dx", "dscale", "dbias", "mean", "variance")
    for k, v in zip(keys, [x, scale, bias, w] + res):
        out[f"{tag}_{k}"] = np.asarray(v)


x = rng.uniform(-2, 2, (2, 6, 3, 4)).astype("float32")
run(
    "gn",
    lambda v, pa, ba: fluid.layers.group_norm(v, 3, epsilon=1e-5, param_attr=pa, bias_attr=ba),
    x,
    6,
)
xh = rng.uniform(-2, 2, (2, 3, 4, 6)).astype("float32")
run(
    "gnhwc",
    lambda v, pa, ba: fluid.layers.group_norm(
        v, 2, param_attr=pa, bias_attr=ba, data_layout="NHWC"
    ),
    xh,
    6,
)
xi = rng.uniform(-2, 2, (2, 3, 4, 5)).astype("float32")
run(
    "in",
    lambda v, pa, ba: fluid.layers.instance_norm(v, epsilon=1e-5, param_attr=pa, bias_attr=ba),
    xi,
    3,
)
# uneven groups: C=5 in 2 groups (3 + 2), C=7 in 3 groups (3 + 3 + 1), NHWC C=5 in 3 (2 + 2 + 1),
# C=6 in 4 groups (2 + 2 + 2 + an empty one, whose Mean/Variance Fluid 1.8.5 reports as NaN)
for tag, shape, groups, layout in [
    ("gnu52", (2, 5, 3, 2), 2, "NCHW"),
    ("gnu73", (2, 7, 2, 2), 3, "NCHW"),
    ("gnuhwc", (2, 2, 3, 5), 3, "NHWC"),
    ("gnu64", (2, 6, 2, 2), 4, "NCHW"),
]:
    run(
        tag,
        lambda v, pa, ba, g=groups, lay=layout: fluid.layers.group_norm(
            v, g, param_attr=pa, bias_attr=ba, data_layout=lay
        ),
        rng.uniform(-2, 2, shape).astype("float32"),
        shape[-1 if layout == "NHWC" else 1],
    )
np.savez(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_norm_extra.npz"), **out)
