"""Golden data for TreeConv: run with the Fluid 1.8.5 oracle.

$FLUID18_PYTHON tests/dygraph/data/fluid18_tree_conv.py
"""

import os

import numpy as np
import paddle.fluid as fluid

rng = np.random.RandomState(12)
x = rng.uniform(-1, 1, (2, 7, 3)).astype("float32")
# BFS-ordered trees with 1-based node ids, padded with [0, 0]
edges = np.array(
    [
        [[1, 2], [1, 3], [1, 4], [2, 5], [3, 6], [6, 7]],
        [[1, 2], [2, 3], [2, 4], [3, 5], [3, 6], [3, 7]],
    ],
    "int32",
)
out = {"x": x, "edges": edges}
for md in (2, 3):
    w = rng.uniform(-1, 1, (3, 3, 4, 2)).astype("float32")
    with fluid.dygraph.guard():
        tc = fluid.dygraph.TreeConv(
            3,
            4,
            2,
            max_depth=md,
            param_attr=fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(w)),
        )
        xv = fluid.dygraph.to_variable(x)
        xv.stop_gradient = False
        y = tc(xv, fluid.dygraph.to_variable(edges))
        fluid.layers.reduce_sum(y).backward()
        out[f"w{md}"], out[f"out{md}"], out[f"dx{md}"] = w, y.numpy(), xv.gradient()
        out[f"dw{md}"] = tc.weight.gradient()
here = os.path.dirname(os.path.abspath(__file__))
np.savez(os.path.join(here, "fluid18_tree_conv.npz"), **out)
