"""Golden data for pooling windows that lie wholly in the padding (padding >= ksize, or
ceil_mode's trailing window): run with the Fluid 1.8.5 oracle.

$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_pool_padding.py

Each entry ``<name>_out`` (and ``<name>_mask``) holds the forward result of ``x2``/``x3``;
``<name>_dx`` the gradient for an output gradient ``1, 2, 3, ...`` (row-major). The
with-index ops' gradients are left out: Fluid 1.8.5 writes the gradient of a -1 index
outside the input plane.
"""

import os

import numpy as np
import paddle.fluid as fluid
from fluid18_pool_run import run
from paddle.fluid.layer_helper import LayerHelper


def _with_index(x, op, k, s, p):
    helper = LayerHelper(op)
    out = helper.create_variable_for_type_inference(x.dtype)
    mask = helper.create_variable_for_type_inference("int32")
    attrs = dict(ksize=k, strides=s, paddings=p, global_pooling=False, adaptive=False)
    helper.append_op(type=op, inputs={"X": x}, outputs={"Out": out, "Mask": mask}, attrs=attrs)
    return out, mask


def main():
    x2 = (np.random.RandomState(0).permutation(50).reshape(1, 2, 5, 5) / 50 - 0.3).astype("f4")
    x3 = (np.random.RandomState(1).permutation(27).reshape(1, 1, 3, 3, 3) / 27 - 0.3).astype("f4")
    data = {"x2": x2, "x3": x3}
    for pt, ex, name in (("max", True, "max"), ("avg", True, "avg_ex"), ("avg", False, "avg_in")):
        o, g = run(
            lambda x, pt=pt, ex=ex: [
                fluid.layers.pool2d(x, 2, pt, 2, 1, ceil_mode=True, exclusive=ex)
            ],
            x2,
        )
        data[f"p2_ceil_{name}_out"], data[f"p2_ceil_{name}_dx"] = o, g
        o, g = run(
            lambda x, pt=pt, ex=ex: [
                fluid.layers.pool3d(x, 2, pt, 2, 1, ceil_mode=True, exclusive=ex)
            ],
            x3,
        )
        data[f"p3_ceil_{name}_out"], data[f"p3_ceil_{name}_dx"] = o, g
    o, g = run(lambda x: [fluid.layers.pool2d(x, 2, "max", 2, 2)], x2)
    data["p2_pad2_max_out"], data["p2_pad2_max_dx"] = o, g
    o, g = run(lambda x: [fluid.layers.pool3d(x, 2, "max", 2, 2)], x3)
    data["p3_pad2_max_out"], data["p3_pad2_max_dx"] = o, g
    k2, k3 = [2, 2], [2, 2, 2]
    o, m = run(lambda x: _with_index(x, "max_pool2d_with_index", k2, k2, [2, 2]), x2, grad=False)
    data["i2_pad2_out"], data["i2_pad2_mask"] = o, m
    o, m = run(lambda x: _with_index(x, "max_pool3d_with_index", k3, k3, [2, 2, 2]), x3, grad=False)
    data["i3_pad2_out"], data["i3_pad2_mask"] = o, m
    here = os.path.dirname(os.path.abspath(__file__))
    np.savez(os.path.join(here, "fluid18_pool_padding.npz"), **data)


if __name__ == "__main__":
    main()
