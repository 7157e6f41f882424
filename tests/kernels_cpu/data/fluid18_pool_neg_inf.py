"""Golden data for max pooling windows whose inputs are all -inf: run with the Fluid 1.8.5 oracle.

$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_pool_neg_inf.py

``x2`` (1, 2, 5, 5) and ``x3`` (1, 2, 4, 4, 4) hold random values with blocks of -inf that
fill some windows of each pooling below. ``<name>_out`` is the forward result (and
``<name>_mask`` the with-index ops' indices), ``<name>_dx`` the gradient for an output
gradient ``1, 2, 3, ...`` (row-major).
"""

import os

import numpy as np
import paddle.fluid as fluid
from fluid18_pool_run import run
from paddle.fluid.layer_helper import LayerHelper


def _with_index(x, op, k):
    helper = LayerHelper(op)
    out = helper.create_variable_for_type_inference(x.dtype)
    mask = helper.create_variable_for_type_inference("int32")
    attrs = dict(
        ksize=k, strides=[1] * len(k), paddings=[0] * len(k), global_pooling=False, adaptive=True
    )
    helper.append_op(type=op, inputs={"X": x}, outputs={"Out": out, "Mask": mask}, attrs=attrs)
    return out, mask


def main():
    rng = np.random.RandomState(0)
    x2 = rng.uniform(-1, 1, (1, 2, 5, 5)).astype("f4")
    x2[0, 0, :3, :3] = -np.inf  # adaptive 2x2 of 5: window (0, 0) is rows/cols 0..2
    x2[0, 1, 3:, 3:] = -np.inf  # window (1, 1) is rows/cols 2..4: partly -inf
    x2[0, 1, :2, :2] = -np.inf  # regular 2x2 stride 2: window (0, 0)
    x3 = rng.uniform(-1, 1, (1, 2, 4, 4, 4)).astype("f4")
    x3[0, 0, :2, :2, :2] = -np.inf  # a 2x2x2 window (regular and adaptive 2x2x2)
    x3[0, 1, 2:, 2:, :] = -np.inf
    data = {"x2": x2, "x3": x3}
    o, g = run(lambda x: [fluid.layers.adaptive_pool2d(x, 2, "max")], x2)
    data["a2_out"], data["a2_dx"] = o, g
    o, g = run(lambda x: [fluid.layers.pool2d(x, 2, "max", 2)], x2)
    data["p2_out"], data["p2_dx"] = o, g
    o, g = run(lambda x: [fluid.layers.pool3d(x, 2, "max", 2)], x3)
    data["p3_out"], data["p3_dx"] = o, g
    o, g = run(lambda x: [fluid.layers.adaptive_pool3d(x, 2, "max")], x3)
    data["a3_out"], data["a3_dx"] = o, g
    o, m = run(lambda x: _with_index(x, "max_pool2d_with_index", [2, 2]), x2, grad=False)
    data["i2_out"], data["i2_mask"] = o, m
    o, m = run(lambda x: _with_index(x, "max_pool3d_with_index", [2, 2, 2]), x3, grad=False)
    data["i3_out"], data["i3_mask"] = o, m
    here = os.path.dirname(os.path.abspath(__file__))
    np.savez(os.path.join(here, "fluid18_pool_neg_inf.npz"), **data)


if __name__ == "__main__":
    main()
