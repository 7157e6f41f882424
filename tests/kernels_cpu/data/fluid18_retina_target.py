"""retinanet_target_assign from the real Fluid 1.8.5 (two images: image scales 1 and 2, a crowd box).

Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_retina_target.py``
(writes ``fluid18_retina_target.npz``).
"""

import numpy as np
from _fluid18 import data_vars

GT_PER_IMAGE = [2, 3]


def inputs():
    rng = np.random.RandomState(43)
    xy = rng.rand(30, 2) * 50
    anchors = np.concatenate([xy, xy + rng.rand(30, 2) * 20 + 8], 1).astype("float32")
    gt = anchors[[3, 17, 5, 22, 8]] + rng.randn(5, 4).astype("float32") * 2
    gt[2:] /= 2  # image 2 is scaled by 2
    return {
        "bbox_pred": rng.randn(2, 30, 4).astype("float32"),
        "cls_logits": rng.randn(2, 30, 3).astype("float32"),
        "anchor": anchors,
        "anchor_var": np.tile(np.array([[0.1, 0.1, 0.2, 0.2]], "float32"), (30, 1)),
        "gt_boxes": gt.astype("float32"),
        "gt_labels": np.array([[1], [3], [2], [1], [3]], "int32"),
        "is_crowd": np.array([[0], [0], [0], [1], [0]], "int32"),
        "im_info": np.array([[70, 70, 1.0], [140, 140, 2.0]], "float32"),
    }


LOD = ("gt_boxes", "gt_labels", "is_crowd")


def build(fluid):
    feed = inputs()
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = data_vars(fluid, feed, {k: GT_PER_IMAGE for k in LOD})
        outs = L.retinanet_target_assign(
            v["bbox_pred"], v["cls_logits"], v["anchor"], v["anchor_var"], v["gt_boxes"], v["gt_labels"],
            v["is_crowd"], v["im_info"], num_classes=3, positive_overlap=0.5, negative_overlap=0.4,
        )  # fmt: skip
    return main, startup, feed, list(outs)


NAMES = ["scores", "location", "label", "bbox", "inside_weight", "fg_num"]

if __name__ == "__main__":
    from _fluid18 import write_golden

    write_golden(__file__, build, NAMES)
