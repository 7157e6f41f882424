"""Golden data for adaptive_pool3d(require_index=True): run with Fluid 1.8.5.

    $FLUID18_PYTHON tests/kernels_cpu/data/fluid18_pool3d_index.py

Writes fluid18_pool3d_index.npz next to this file: per case the input, Out, Mask and the
gradient of sum(Out * W) with respect to the input (overlapping adaptive cells, and a tie).
"""

import os

import numpy as np
import paddle.fluid as fluid

rng = np.random.RandomState(13)
out = {}


def run(tag, shape, size):
    x = rng.uniform(-1, 1, shape).astype("float32")
    x[0, 0, 0, 0, :2] = 3.0  # a tie: the first maximum wins
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        xv = fluid.data("x", list(shape), "float32")
        xv.stop_gradient = False
        y, mask = fluid.layers.adaptive_pool3d(xv, size, require_index=True)
        w = rng.uniform(-1, 1, y.shape).astype("float32")
        grads = fluid.gradients([fluid.layers.reduce_sum(y * fluid.layers.assign(w))], [xv])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    res = exe.run(main, feed={"x": x}, fetch_list=[y, mask] + grads)
    for k, v in zip(("x", "w", "out", "mask", "dx"), [x, w] + res):
        out[f"{tag}_{k}"] = np.asarray(v)


run("uneven", (2, 2, 3, 5, 4), [2, 3, 2])
run("even", (1, 3, 4, 4, 6), [2, 2, 3])
np.savez(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_pool3d_index.npz"), **out
)
