"""deformable_roi_pooling (with gradients) and roi_perspective_transform from the real Fluid 1.8.5.

Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_deformable_roi.py``
(writes ``fluid18_deformable_roi.npz``).
"""

import numpy as np

ROIS_PER_IMAGE = [2, 1]


def inputs():
    rng = np.random.RandomState(71)
    xy = rng.rand(3, 2) * 8
    return {
        "x": rng.rand(2, 8, 12, 12).astype("float32"),
        "rois": np.concatenate([xy, xy + rng.rand(3, 2) * 10 + 4], 1).astype("float32"),
        "trans": (rng.randn(3, 2, 2, 2) * 0.5).astype("float32"),
    }


def build(fluid):
    feed = inputs()
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [2, 8, 12, 12], "float32")
        rois = fluid.data("rois", [-1, 4], "float32", lod_level=1)
        trans = fluid.data("trans", [3, 2, 2, 2], "float32")
        x.stop_gradient = trans.stop_gradient = False
        feed["rois"] = fluid.create_lod_tensor(feed["rois"], [ROIS_PER_IMAGE], fluid.CPUPlace())
        out = L.deformable_roi_pooling(
            x, rois, trans, False, 0.5, [1, 1], 2, 2, [2, 2], 2, 0.1, False
        )
        # position_sensitive=True fails in Fluid 1.8.5 under Python 3 (a float output_dim attr), and
        # group_size > 1 without it reads out of bounds there
        out_ps = L.deformable_roi_pooling(
            x, rois, trans, False, 0.5, [1, 1], 2, 2, [2, 2], 1, 0.2, False
        )
        out_nt = L.deformable_roi_pooling(x, rois, trans, True, 1.0, [1, 1], 3, 3, [2, 2], 2)
        r = [
            L.assign(np.random.RandomState(i).rand(*([3] + list(o.shape[1:]))).astype("float32"))
            for i, o in enumerate((out, out_ps, out_nt))
        ]
        loss = L.reduce_sum(out * r[0]) + L.reduce_sum(out_ps * r[1]) + L.reduce_sum(out_nt * r[2])
        gx, gt = fluid.gradients([loss], [x, trans])
    return main, startup, feed, [out, out_ps, out_nt, gx, gt]


NAMES = ["out", "out_groups_std", "out_no_trans", "grad_x", "grad_trans"]

if __name__ == "__main__":
    from _fluid18 import write_golden

    write_golden(__file__, build, NAMES)
