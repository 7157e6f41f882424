"""generate_mask_labels from the real Fluid 1.8.5.

Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_mask_labels.py``
(writes ``fluid18_mask_labels.npz``).
"""

import numpy as np


def inputs():
    # image 0: a triangle (class 1) and a two-part object (class 2); image 1: a pentagon (class 1)
    segms = [
        [[[4, 4, 20, 6, 10, 22]], [[24, 24, 34, 24, 34, 30, 24, 30], [26, 32, 33, 32, 30, 38]]],
        [[[10, 5, 25, 8, 28, 20, 17, 28, 6, 18]]],
    ]
    pts, lod0, lod1, lod2 = [], [], [], []
    for img in segms:
        lod0.append(len(img))
        for obj in img:
            lod1.append(len(obj))
            for poly in obj:
                xy = np.array(poly, "float32").reshape(-1, 2)
                lod2.append(len(xy))
                pts.append(xy)
    rois = np.array([[3, 3, 21, 23], [22, 22, 36, 40], [5, 5, 15, 15], [0, 0, 10, 10],
                     [8, 4, 29, 29], [12, 10, 20, 20]], "float32")  # fmt: skip
    return {
        "im_info": np.array([[48, 48, 1.0], [40, 40, 1.0]], "float32"),
        "gt_classes": (np.array([[1], [2], [1]], "int32"), [[2, 1]]),
        "is_crowd": (np.zeros((3, 1), "int32"), [[2, 1]]),
        "gt_segms": (np.concatenate(pts), [lod0, lod1, lod2]),
        "rois": (rois, [[4, 2]]),
        "labels_int32": (np.array([[1], [2], [1], [0], [1], [0]], "int32"), [[4, 2]]),
    }


def build(fluid):
    raw = inputs()
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    feed = {}
    with fluid.program_guard(main, startup):
        v = {}
        for k, a in raw.items():
            if isinstance(a, tuple):
                arr, lod = a
                v[k] = fluid.data(k, [-1] + list(arr.shape[1:]), arr.dtype.name, lod_level=len(lod))
                feed[k] = fluid.create_lod_tensor(arr, lod, fluid.CPUPlace())
            else:
                v[k] = fluid.data(k, list(a.shape), a.dtype.name)
                feed[k] = a
        outs = L.generate_mask_labels(v["im_info"], v["gt_classes"], v["is_crowd"], v["gt_segms"], v["rois"],
                                      v["labels_int32"], num_classes=3, resolution=8)  # fmt: skip
    return main, startup, feed, list(outs)


NAMES = ["mask_rois", "roi_has_mask_int32", "mask_int32"]

if __name__ == "__main__":
    from _fluid18 import write_golden

    write_golden(__file__, build, NAMES, lod=True)
