"""generate_proposals, distribute_fpn_proposals and collect_fpn_proposals from the real
Fluid 1.8.5.

Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_detection_rpn.py``
(writes ``fluid18_detection_rpn.npz``: arrays and LoD offsets).
"""

import numpy as np


def inputs():
    rng = np.random.RandomState(31)
    n, a, h, w = 2, 3, 4, 5
    return {
        "scores": rng.rand(n, a, h, w).astype("float32"),
        "deltas": (rng.randn(n, 4 * a, h, w) * 0.3).astype("float32"),
        "im_info": np.array([[64, 80, 1.0], [60, 70, 1.0]], "float32"),
        "feat": np.zeros((n, 8, h, w), "float32"),
    }


def build(fluid):
    feed = inputs()
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = {k: fluid.data(k, list(a.shape), a.dtype.name) for k, a in feed.items()}
        anchors, variances = L.anchor_generator(
            v["feat"], [24.0, 48.0, 96.0], [1.0], stride=[16.0, 16.0]
        )
        rois, probs = L.generate_proposals(
            v["scores"], v["deltas"], v["im_info"], anchors, variances, 30, 12, 0.6, 2.0
        )
        rois2, probs2 = L.generate_proposals(
            v["scores"], v["deltas"], v["im_info"], anchors, variances, -1, 20, 0.8, 8.0, 0.9
        )
        multi, restore = L.distribute_fpn_proposals(rois2, 2, 4, 3, 40)
        scores = [L.reduce_mean(r, dim=1, keep_dim=True) for r in multi]
        collected = L.collect_fpn_proposals(multi, scores, 2, 4, 10)
    return main, startup, feed, [rois, probs, rois2, probs2] + list(multi) + [restore, collected]


NAMES = ["rois", "probs", "rois_eta", "probs_eta", "fpn2", "fpn3", "fpn4", "restore", "collected"]

if __name__ == "__main__":
    from _fluid18 import write_golden

    write_golden(__file__, build, NAMES, lod=True)
