"""multiclass_nms, multiclass_nms2, matrix_nms and locality_aware_nms from the real Fluid 1.8.5.

``build(fluid)`` builds the same program with either framework from the same seeded inputs.
Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_detection_nms.py``
(writes ``fluid18_detection_nms.npz``: each output's array and its LoD offsets).
"""

import numpy as np


def inputs():
    rng = np.random.RandomState(11)
    n, m, c = 2, 16, 3
    centers = rng.rand(n, 4, 2) * 0.6 + 0.2  # 4 clusters of 4 overlapping boxes per image
    xy = np.repeat(centers, 4, axis=1) + rng.randn(n, m, 2) * 0.03
    wh = rng.rand(n, m, 2) * 0.1 + 0.15
    boxes = np.concatenate([xy - wh / 2, xy + wh / 2], axis=2).astype("float32")
    scores = rng.rand(n, c, m).astype("float32")
    east = (rng.rand(1, 6, 8) * 0.2).astype("float32")
    east[0, :, :2] += rng.rand(6, 2).astype("float32") * 0.02  # near-duplicates to merge
    return {
        "boxes": boxes,
        "scores": scores,
        "pix": (boxes * 50).astype("float32"),
        "quad": np.tile(east[0, :, :2], (1, 4))[None].astype("float32")
        + np.array([0, 0, 0.2, 0, 0.2, 0.2, 0, 0.2], "float32"),
        "qscore": rng.rand(1, 1, 6).astype("float32"),
        "loc": (rng.randn(n, m, 4) * 0.3).astype("float32"),
        "conf": (rng.randn(n, m, c) * 2).astype("float32"),
        "prior": boxes[0],
        "prior_var": np.tile(np.array([[0.1, 0.1, 0.2, 0.2]], "float32"), (m, 1)),
        "tilted": _tilted(rng),
        "tscore": rng.rand(1, 1, 10).astype("float32"),
    }


def _tilted(rng):
    """[1, 10, 8]: rotated rectangles in 3 clusters (consecutive boxes overlap)."""
    quads = []
    for k in range(10):
        cx, cy = 20 + 15 * (k // 4) + rng.randn() * 1.5, 20 + rng.randn() * 1.5
        w, h, t = 12 + rng.rand() * 4, 6 + rng.rand() * 3, 0.3 + rng.randn() * 0.1
        c, s = np.cos(t), np.sin(t)
        corners = [(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)]
        quads.append([v for x, y in corners for v in (cx + c * x - s * y, cy + s * x + c * y)])
    return np.array(quads, "float32")[None]


def build(fluid):
    feed = inputs()
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = {k: fluid.data(k, list(a.shape), a.dtype.name) for k, a in feed.items()}
        b, s = v["boxes"], v["scores"]
        nms2, nms2_idx = fluid.contrib.multiclass_nms2(b, s, 0.3, 6, 5, 0.5, return_index=True)
        mx, mx_idx = L.matrix_nms(b, s, 0.2, 0.3, 10, 8, return_index=True)
        outs = [
            L.multiclass_nms(b, s, 0.1, 8, 6, 0.4),
            L.multiclass_nms(v["pix"], s, 0.05, -1, -1, 0.6, False, 0.9, -1),
            nms2,
            nms2_idx,
            mx,
            mx_idx,
            L.matrix_nms(b, s, 0.1, 0.2, -1, 10, True, 1.5, background_label=-1),
            L.multiclass_nms(b, s, 2.0, 8, 6),
            L.detection_output(
                v["loc"],
                v["conf"],
                v["prior"],
                v["prior_var"],
                nms_top_k=10,
                keep_top_k=7,
                score_threshold=0.05,
                nms_threshold=0.45,
            ),
            L.locality_aware_nms(v["quad"], v["qscore"], 0.1, 6, 4, 0.3),
            L.locality_aware_nms(v["tilted"], v["tscore"], 0.2, 10, 6, 0.2, False),
        ]
    return main, startup, feed, outs


NAMES = [
    "multiclass_nms",
    "multiclass_nms_pixels_eta_no_background",
    "multiclass_nms2",
    "multiclass_nms2_index",
    "matrix_nms",
    "matrix_nms_index",
    "matrix_nms_gaussian",
    "multiclass_nms_empty",
    "detection_output",
    "locality_aware_nms",
    "locality_aware_nms_tilted",
]

if __name__ == "__main__":
    from _fluid18 import write_golden

    write_golden(__file__, build, NAMES, lod=True)
