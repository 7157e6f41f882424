"""yolov3_loss (forward and the gradient of its sum w.r.t. X) from the real Fluid 1.8.5.

``build(fluid)`` builds the same program with either framework from the same seeded inputs.
Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_detection_yolo.py``
(writes ``fluid18_detection_yolo.npz``).
"""

import numpy as np

ANCHORS = [10, 13, 16, 30, 33, 23, 30, 61, 62, 45, 59, 119]


def inputs():
    rng = np.random.RandomState(17)
    n, b, c, h = 2, 4, 3, 4
    xy = rng.rand(n, b, 2) * 0.8 + 0.1
    wh = rng.rand(n, b, 2) * 0.5 + 0.05
    box = np.concatenate([xy, wh], axis=2).astype("float32")
    box[1, 3] = 0  # padding: an empty ground-truth slot
    return {
        "x": (rng.randn(n, 3 * (5 + c), h, h) * 0.5).astype("float32"),
        "x2": (rng.randn(n, 2 * (5 + c), h, h) * 0.5).astype("float32"),
        "gt_box": box,
        "gt_label": rng.randint(0, c, (n, b)).astype("int32"),
        "gt_score": rng.rand(n, b).astype("float32"),
    }


def build(fluid):
    feed = inputs()
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = {k: fluid.data(k, list(a.shape), a.dtype.name) for k, a in feed.items()}
        v["x"].stop_gradient = False
        v["x2"].stop_gradient = False
        loss = L.yolov3_loss(v["x"], v["gt_box"], v["gt_label"], ANCHORS, [3, 4, 5], 3, 0.5, 8)
        loss2 = L.yolov3_loss(
            v["x2"], v["gt_box"], v["gt_label"], ANCHORS, [0, 1], 3, 0.3, 16, v["gt_score"], False
        )
        g1 = fluid.gradients([L.reduce_sum(loss)], [v["x"]])[0]
        g2 = fluid.gradients([L.reduce_sum(loss2)], [v["x2"]])[0]
    return main, startup, feed, [loss, loss2, g1, g2]


NAMES = ["loss", "loss_score_nosmooth", "grad", "grad_score_nosmooth"]

if __name__ == "__main__":
    from _fluid18 import write_golden

    write_golden(__file__, build, NAMES)
