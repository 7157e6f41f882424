"""roi_perspective_transform (with its input gradient) from the real Fluid 1.8.5.

Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_roi_perspective.py``
(writes ``fluid18_roi_perspective.npz``).
"""

import numpy as np

ROIS_PER_IMAGE = [2, 1]


def inputs():
    rng = np.random.RandomState(81)
    quads = np.array(
        [[1, 1, 8, 2, 9, 7, 2, 6], [3, 0.5, 10, 1.5, 10.5, 9, 2.5, 8], [0, 2, 6, 1, 7, 8, 1, 9]],
        "float32",
    )
    return {
        "x": rng.rand(2, 3, 10, 12).astype("float32"),
        "rois": quads + rng.rand(3, 8).astype("float32") * 0.5,
    }


def build(fluid):
    feed = inputs()
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [2, 3, 10, 12], "float32")
        x.stop_gradient = False
        rois = fluid.data("rois", [-1, 8], "float32", lod_level=1)
        feed["rois"] = fluid.create_lod_tensor(feed["rois"], [ROIS_PER_IMAGE], fluid.CPUPlace())
        res = L.roi_perspective_transform(x, rois, 4, 5, 1.0)
        res2 = L.roi_perspective_transform(x, rois, 3, 3, 0.5)
        out, out2 = (r[0] if isinstance(r, tuple) else r for r in (res, res2))
        w = L.assign(np.random.RandomState(1).rand(3, 3, 4, 5).astype("float32"))
        loss = L.reduce_sum(out * w) + L.reduce_sum(out2)
        gx = fluid.gradients([loss], [x])[0]
    extra = list(res[1:]) if isinstance(res, tuple) else []
    return main, startup, feed, [out, out2, gx] + extra


NAMES = [
    "out",
    "out_half_scale",
    "grad_x",
    "mask",
    "transform_matrix",
    "out2in_idx",
    "out2in_weights",
]

if __name__ == "__main__":
    from _fluid18 import write_golden

    write_golden(__file__, build, NAMES)
