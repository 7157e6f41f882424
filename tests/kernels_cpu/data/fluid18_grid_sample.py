"""Golden data for affine_grid / grid_sampler: run with the Fluid 1.8.5 oracle.

$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_grid_sample.py
"""

import os

import numpy as np
import paddle.fluid as fluid

rng = np.random.RandomState(0)
x = rng.rand(1, 2, 3, 4).astype("float32")
theta = np.array([[[0.9, 0.2, 0.1], [-0.1, 1.1, 0.05]]], "float32")
grid = rng.uniform(-1.2, 1.2, (1, 3, 4, 2)).astype("float32")
with fluid.dygraph.guard():
    v = fluid.dygraph.to_variable
    g = fluid.layers.affine_grid(v(theta), [1, 2, 2, 3]).numpy()
    o = fluid.layers.grid_sampler(v(x), v(grid)).numpy()
here = os.path.dirname(os.path.abspath(__file__))
np.savez(os.path.join(here, "fluid18_grid_sample.npz"), x=x, theta=theta, grid=grid, g=g, o=o)
