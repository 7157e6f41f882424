"""rpn_target_assign (use_random=False) from the real Fluid 1.8.5, in two configurations.

Regenerate with the oracle:
``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_detection_rpn_target.py``
(writes ``fluid18_detection_rpn_target.npz``).
"""

import numpy as np
from _fluid18 import data_vars

GT_PER_IMAGE = [2, 3]


def inputs():
    rng = np.random.RandomState(41)
    xy = rng.rand(40, 2) * 50
    anchors = np.concatenate([xy, xy + rng.rand(40, 2) * 20 + 8], 1).astype("float32")
    gt = anchors[[3, 17, 5, 22, 30]] + rng.randn(5, 4).astype("float32") * 2
    return {
        "bbox_pred": rng.randn(2, 40, 4).astype("float32"),
        "cls_logits": rng.randn(2, 40, 1).astype("float32"),
        "anchor": anchors,
        "anchor_var": np.tile(np.array([[0.1, 0.1, 0.2, 0.2]], "float32"), (40, 1)),
        "gt_boxes": gt.astype("float32"),
        "is_crowd": np.array([[0], [0], [0], [1], [0]], "int32"),
        "im_info": np.array([[64, 64, 1.0], [70, 60, 1.0]], "float32"),
        "im_info2": np.array([[64, 64, 1.0], [140, 120, 2.0]], "float32"),
    }


LOD = ("gt_boxes", "is_crowd")


def build(fluid):
    feed = inputs()
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = data_vars(fluid, feed, {k: GT_PER_IMAGE for k in LOD})
        outs = L.rpn_target_assign(
            v["bbox_pred"], v["cls_logits"], v["anchor"], v["anchor_var"], v["gt_boxes"],
            v["is_crowd"], v["im_info"], rpn_batch_size_per_im=12, rpn_straddle_thresh=0.0,
            rpn_fg_fraction=0.5, rpn_positive_overlap=0.5, rpn_negative_overlap=0.3, use_random=False,
        )  # fmt: skip
        outs2 = L.rpn_target_assign(
            v["bbox_pred"], v["cls_logits"], v["anchor"], v["anchor_var"], v["gt_boxes"],
            v["is_crowd"], v["im_info2"], rpn_batch_size_per_im=20, rpn_straddle_thresh=-1.0,
            rpn_fg_fraction=0.25, rpn_positive_overlap=0.6, rpn_negative_overlap=0.4, use_random=False,
        )  # fmt: skip
    return main, startup, feed, list(outs) + list(outs2)


PARTS = ["scores", "location", "label", "bbox", "inside_weight"]
NAMES = PARTS + [p + "_2" for p in PARTS]

if __name__ == "__main__":
    from _fluid18 import write_golden

    write_golden(__file__, build, NAMES)
