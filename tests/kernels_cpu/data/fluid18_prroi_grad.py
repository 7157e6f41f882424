"""Golden data for prroi_pool's gradients (input and ROI coordinates): run with Fluid 1.8.5.

    $FLUID18_PYTHON tests/kernels_cpu/data/fluid18_prroi_grad.py

Writes fluid18_prroi_grad.npz next to this file: per spatial scale the input, ROIs (two
images), the weights W, Out and the gradients of sum(Out * W) for X and ROIs.
"""

import os

import numpy as np

RNG = np.random.RandomState(23)
X = RNG.rand(2, 3, 6, 7).astype("float32")
ROIS = np.array(
    [[0.7, 1.2, 4.9, 5.3], [1.1, 0.4, 6.1, 3.2], [-0.6, 2.2, 3.1, 6.4], [2.3, 1.7, 9.5, 4.1]],
    "float32",
)
ROI_LOD = [[2, 2]]
POOLED = (2, 3)
SCALES = {"scale1": 1.0, "scale_half": 0.5}

if __name__ == "__main__":
    import paddle.fluid as fluid

    out = {"x": X, "rois": ROIS}
    for tag, scale in SCALES.items():
        w = RNG.rand(len(ROIS), 3, *POOLED).astype("float32")
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup):
            xv = fluid.data("x", list(X.shape), "float32")
            xv.stop_gradient = False
            rv = fluid.data("r", [-1, 4], "float32", lod_level=1)
            rv.stop_gradient = False
            y = fluid.layers.prroi_pool(xv, rv, scale, *POOLED)
            loss = fluid.layers.reduce_sum(y * fluid.layers.assign(w))
            grads = fluid.gradients([loss], [xv, rv])
        feed = {"x": X, "r": fluid.create_lod_tensor(ROIS, ROI_LOD, fluid.CPUPlace())}
        res = fluid.Executor(fluid.CPUPlace()).run(main, feed=feed, fetch_list=[y] + grads)
        for k, v in zip(("w", "out", "dx", "drois"), [w] + res):
            out[f"{tag}_{k}"] = np.asarray(v)
    here = os.path.dirname(os.path.abspath(__file__))
    np.savez(os.path.join(here, "fluid18_prroi_grad.npz"), **out)
