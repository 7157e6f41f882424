"""roi_align, roi_pool, psroi_pool and prroi_pool from the real Fluid 1.8.5, with the
gradients of sum(out * w) w.r.t. the feature map.

``build(fluid)`` builds the same program with either framework from the same seeded inputs.
Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_detection_roi.py``
(writes ``fluid18_detection_roi.npz``).
"""

import numpy as np

ROIS_PER_IMAGE = [2, 3]


def inputs():
    rng = np.random.RandomState(5)
    xy = rng.rand(5, 2) * 20
    wh = rng.rand(5, 2) * 14 + 1
    rois = np.concatenate([xy, xy + wh], axis=1).astype("float32")
    rois[4] = [30.0, 28.0, 40.0, 36.0]  # partly outside the 16 x 16 map at scale 0.5
    return {
        "x": rng.rand(2, 8, 16, 16).astype("float32"),
        "rois": rois,
    }


def build(fluid):
    feed = inputs()
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [2, 8, 16, 16], "float32")
        x.stop_gradient = False
        rois = fluid.data("rois", [-1, 4], "float32", lod_level=1)
        rois.stop_gradient = False  # prroi_pool_grad always writes the ROIs gradient
        feed["rois"] = fluid.create_lod_tensor(feed["rois"], [ROIS_PER_IMAGE], fluid.CPUPlace())
        outs = [
            L.roi_align(x, rois, 3, 2, 0.5, 2),
            L.roi_align(x, rois, 2, 2, 0.25, -1),
            L.roi_pool(x, rois, 3, 3, 0.5),
            L.psroi_pool(x, rois, 2, 0.5, 2, 2),
            L.prroi_pool(x, rois, 0.5, 2, 3),
        ]
        grads = []
        for i, o in enumerate(outs):
            w = L.assign(np.random.RandomState(i).rand(*[5] + list(o.shape[1:])).astype("float32"))
            loss = L.reduce_sum(L.elementwise_mul(o, w))
            grads.append(fluid.gradients([loss], [x])[0])
    return main, startup, feed, outs + grads


NAMES = ["roi_align_s2", "roi_align_adaptive", "roi_pool", "psroi_pool", "prroi_pool"]
NAMES = NAMES + [n + "_grad" for n in NAMES]

if __name__ == "__main__":
    from _fluid18 import write_golden

    write_golden(__file__, build, NAMES)
