"""Box-geometry detection layers (iou_similarity, box_coder, prior_box, density_prior_box,
anchor_generator, box_clip, yolo_box, polygon_box_transform) from the real Fluid 1.8.5.

``build(fluid)`` builds the same program with either framework from the same seeded inputs.
Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_detection_boxes.py``
(writes ``fluid18_detection_boxes.npz`` next to this file).
"""

import numpy as np


def _boxes(rng, n, scale=1.0):
    xy = rng.rand(n, 2) * 0.6 * scale
    wh = (rng.rand(n, 2) * 0.4 + 0.05) * scale
    return np.concatenate([xy, xy + wh], axis=1).astype("float32")


def inputs():
    rng = np.random.RandomState(7)
    return {
        "bx": _boxes(rng, 5),
        "by": _boxes(rng, 3),
        "bpx": _boxes(rng, 4, 20.0),
        "bpy": _boxes(rng, 6, 20.0),
        "prior": _boxes(rng, 3),
        "pvar": (rng.rand(3, 4) * 0.2 + 0.1).astype("float32"),
        "deltas": (rng.randn(2, 3, 4) * 0.5).astype("float32"),
        "deltas_t": (rng.randn(3, 2, 4) * 0.5).astype("float32"),
        "feat": rng.rand(1, 2, 3, 4).astype("float32"),
        "img": rng.rand(1, 3, 24, 32).astype("float32"),
        "clip_in": (rng.rand(5, 4) * 60 - 10).astype("float32"),
        "im_info": np.array([[40, 50, 1.0], [30, 25, 0.5]], "float32"),
        "yolo_x": (rng.randn(2, 2 * (5 + 3), 3, 3)).astype("float32"),
        "img_size": np.array([[96, 128], [64, 80]], "int32"),
        "geo": rng.rand(1, 4, 2, 3).astype("float32"),
    }


# yolo_box uses a square grid: Fluid 1.8.5 divides x by the grid's height too (a bug for
# non-square maps that oar does not copy; see docs/detection.md)


def build(fluid):
    """Returns (main, startup, feed, outputs)."""
    feed = inputs()
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = {
            k: fluid.data(k, list(a.shape), a.dtype.name) for k, a in feed.items() if k != "clip_in"
        }
        v["clip_in"] = fluid.data("clip_in", [-1, 4], "float32", lod_level=1)
        feed["clip_in"] = fluid.create_lod_tensor(feed["clip_in"], [[2, 3]], fluid.CPUPlace())
        pb, pbv = L.prior_box(
            v["feat"], v["img"], [4.0, 9.0], [8.0, 14.0], [2.0, 0.5], flip=True, clip=True
        )
        pb2, _ = L.prior_box(
            v["feat"],
            v["img"],
            [5.0],
            [10.0],
            [1.0, 3.0],
            steps=[6.0, 7.0],
            offset=0.3,
            min_max_aspect_ratios_order=True,
        )
        dpb, dpbv = L.density_prior_box(
            v["feat"], v["img"], [2, 1], [6.0, 12.0], [1.0, 2.0], clip=True
        )
        dpb2, _ = L.density_prior_box(
            v["feat"], v["img"], [3], [5.0], [0.5], steps=[8.0, 8.0], flatten_to_2d=True
        )
        anc, ancv = L.anchor_generator(v["feat"], [16.0, 32.0], [0.5, 1.0, 2.0], stride=[8.0, 8.0])
        anc2, _ = L.anchor_generator(v["feat"], [24.0], [1.5], [0.2] * 4, [6.0, 10.0], 0.3)
        yb, ys = L.yolo_box(v["yolo_x"], v["img_size"], [10, 13, 30, 20], 3, 0.4, 32)
        yb2, ys2 = L.yolo_box(
            v["yolo_x"], v["img_size"], [10, 13, 30, 20], 3, 0.2, 16, False, scale_x_y=1.2
        )
        outs = [
            L.iou_similarity(v["bx"], v["by"]),
            L.iou_similarity(v["bpx"], v["bpy"], box_normalized=False),
            L.box_coder(v["prior"], v["pvar"], v["bx"]),
            L.box_coder(v["prior"], [0.1, 0.1, 0.2, 0.2], v["bx"], box_normalized=False),
            L.box_coder(v["prior"], v["pvar"], v["deltas"], "decode_center_size"),
            L.box_coder(
                v["prior"], [0.2, 0.1, 0.3, 0.4], v["deltas_t"], "decode_center_size", False, axis=1
            ),
            pb,
            pbv,
            pb2,
            dpb,
            dpbv,
            dpb2,
            anc,
            ancv,
            anc2,
            L.box_clip(v["clip_in"], v["im_info"]),
            yb,
            ys,
            yb2,
            ys2,
            L.polygon_box_transform(v["geo"]),
        ]
    return main, startup, feed, outs


NAMES = [
    "iou_normalized",
    "iou_pixels",
    "encode_var_input",
    "encode_var_attr_pixels",
    "decode_axis0",
    "decode_axis1_var_attr",
    "prior_box_flip_clip",
    "prior_box_var",
    "prior_box_steps_minmax_order",
    "density_prior_box_clip",
    "density_prior_box_var",
    "density_prior_box_flat",
    "anchor_generator",
    "anchor_generator_var",
    "anchor_generator_offset",
    "box_clip",
    "yolo_box_boxes",
    "yolo_box_scores",
    "yolo_box_noclip_scale_boxes",
    "yolo_box_noclip_scale_scores",
    "polygon_box_transform",
]

if __name__ == "__main__":
    from _fluid18 import write_golden

    write_golden(__file__, build, NAMES)
