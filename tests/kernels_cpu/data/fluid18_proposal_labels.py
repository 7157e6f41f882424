"""generate_proposal_labels (use_random=False) from the real Fluid 1.8.5: two images (image
scales 1 and 2, a crowd box), class-specific and class-agnostic targets; and the Cascade
R-CNN mode (``is_cascade_rcnn=True``) on two images of scale 1 with empty proposals.

Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_proposal_labels.py``
(writes ``fluid18_proposal_labels.npz`` and ``fluid18_cascade_labels.npz``: arrays and LoD
offsets). Fluid 1.8.5's cascade kernel sizes its outputs for ``batch_size_per_im`` rows per
image although it keeps every candidate, and leaves the first (number of ground-truth boxes)
proposals of an image unscaled; the cascade case stays clear of both (scale 1, no crowd,
``batch_size_per_im`` above the candidate count).
"""

import numpy as np
from _fluid18 import data_vars

ROIS_PER_IMAGE, GT_PER_IMAGE = [12, 10], [3, 2]


def inputs():
    rng = np.random.RandomState(91)
    gts = []
    for k in GT_PER_IMAGE:
        xy = rng.rand(k, 2) * 40
        gts.append(np.concatenate([xy, xy + rng.rand(k, 2) * 20 + 8], 1))
    rois = []
    for k, g, scale in zip(ROIS_PER_IMAGE, gts, (1.0, 2.0)):
        near = g[rng.randint(0, len(g), k)] + rng.randn(k, 4) * 3
        rois.append(np.maximum(near, 0) * scale)
    return {
        "rois": np.concatenate(rois).astype("float32"),
        "gt_classes": rng.randint(1, 4, (sum(GT_PER_IMAGE), 1)).astype("int32"),
        "is_crowd": np.array([[0], [0], [1], [0], [0]], "int32"),
        "gt_boxes": np.concatenate(gts).astype("float32"),
        "im_info": np.array([[80, 80, 1.0], [160, 160, 2.0]], "float32"),
    }


LOD = {
    "rois": ROIS_PER_IMAGE,
    "gt_classes": GT_PER_IMAGE,
    "is_crowd": GT_PER_IMAGE,
    "gt_boxes": GT_PER_IMAGE,
}


def _data_args(fluid, feed):
    """The layer's five inputs as data variables; ``feed`` gets its LoD tensors."""
    v = data_vars(fluid, feed, LOD)
    return v["rois"], v["gt_classes"], v["is_crowd"], v["gt_boxes"], v["im_info"]


def build(fluid):
    feed = inputs()
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        args = _data_args(fluid, feed)
        outs = list(
            L.generate_proposal_labels(
                *args,
                batch_size_per_im=8,
                fg_fraction=0.25,
                fg_thresh=0.5,
                bg_thresh_hi=0.5,
                bg_thresh_lo=0.0,
                class_nums=4,
                use_random=False,
            )
        )
        outs += list(L.generate_proposal_labels(*args, batch_size_per_im=6, fg_fraction=0.5, fg_thresh=0.4,
                                                bg_thresh_hi=0.4, bg_thresh_lo=0.1, bbox_reg_weights=[1.0, 1.0, 1.0, 1.0],
                                                class_nums=4, use_random=False, is_cls_agnostic=True))  # fmt: skip
    return main, startup, feed, outs


PARTS = ["rois", "labels", "targets", "inside", "outside"]
NAMES = PARTS + [p + "_agnostic" for p in PARTS]
CASCADE_NAMES = [p + "_cascade" for p in PARTS] + [p + "_cascade_agnostic" for p in PARTS]


def build_cascade(fluid):
    feed = inputs()
    feed["rois"][3] = [10, 10, 5, 30]  # empty: dropped
    feed["rois"][9] = [20, 20, 19.5, 30]  # thin but not empty (x2 - x1 + 1 > 0)
    feed["rois"][12:] /= 2.0
    feed["im_info"] = np.array([[80, 80, 1.0], [80, 80, 1.0]], "float32")
    feed["is_crowd"] = np.zeros_like(feed["is_crowd"])
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        args = _data_args(fluid, feed)
        outs = []
        for agnostic in (False, True):
            outs += list(L.generate_proposal_labels(*args, batch_size_per_im=64, fg_fraction=0.05, fg_thresh=0.5,
                                                    bg_thresh_hi=0.5, bg_thresh_lo=0.0, class_nums=4, use_random=False,
                                                    is_cls_agnostic=agnostic, is_cascade_rcnn=True))  # fmt: skip
    return main, startup, feed, outs


if __name__ == "__main__":
    from _fluid18 import write_golden

    write_golden(__file__, build, NAMES, lod=True)
    write_golden(__file__, build_cascade, CASCADE_NAMES, "fluid18_cascade_labels.npz", lod=True)
