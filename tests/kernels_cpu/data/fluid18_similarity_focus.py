"""Golden data for similarity_focus: run with the Fluid 1.8.5 oracle.

$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_similarity_focus.py
"""

import os

import numpy as np
import paddle.fluid as fluid

rng = np.random.RandomState(1)
x = rng.rand(2, 3, 3, 4).astype("float32")
out = {"x": x}
with fluid.dygraph.guard():
    for axis, idx in [(1, [0]), (1, [0, 2]), (2, [1]), (3, [0, 3])]:
        o = fluid.layers.similarity_focus(fluid.dygraph.to_variable(x), axis, idx).numpy()
        out[f"out_{axis}_{len(idx)}"] = o
here = os.path.dirname(os.path.abspath(__file__))
np.savez(os.path.join(here, "fluid18_similarity_focus.npz"), **out)
