"""fluid.metrics.DetectionMAP (the detection_map op, with its accumulated state) from the
real Fluid 1.8.5: per-batch and accumulated mAP over three batches, a reset, one more batch.

``build(fluid)`` builds the same program with either framework; ``batches()`` gives the feeds.
Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_detection_map.py``
(writes ``fluid18_detection_map.npz``).
"""

import os

import numpy as np

CLASSES = 4


def batches():
    """Four batches of (detections [M, 6] + per-image counts, gt label/box/difficult + counts)."""
    rng = np.random.RandomState(2)
    out = []
    for _ in range(4):
        gts, dets, gcount, dcount = [], [], [], []
        for _ in range(2):  # images
            k = rng.randint(1, 4)
            xy = rng.rand(k, 2) * 0.6
            box = np.concatenate([xy, xy + rng.rand(k, 2) * 0.3 + 0.1], 1)
            label = rng.randint(1, CLASSES, (k, 1))
            diff = (rng.rand(k, 1) < 0.3).astype("int32")
            gts.append((label, box, diff))
            gcount.append(k)
            rows = []
            for j in range(k):  # a near hit and a miss per ground truth
                jitter = box[j] + rng.randn(4) * 0.03
                rows.append([label[j, 0], rng.rand(), *jitter])
                rows.append([rng.randint(1, CLASSES), rng.rand() * 0.5, *(rng.rand(4) * 0.2 + 0.5)])
            dets.append(np.array(rows))
            dcount.append(len(rows))
        out.append(
            {
                "det": (np.concatenate(dets).astype("float32"), dcount),
                "gt_label": (np.concatenate([g[0] for g in gts]).astype("float32"), gcount),
                "gt_box": (np.concatenate([g[1] for g in gts]).astype("float32"), gcount),
                "gt_difficult": (np.concatenate([g[2] for g in gts]).astype("int32"), gcount),
            }
        )
    return out


def feed(fluid, batch):
    place = fluid.CPUPlace()
    return {k: fluid.create_lod_tensor(a, [lod], place) for k, (a, lod) in batch.items()}


def build(fluid):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        det = fluid.data("det", [-1, 6], "float32", lod_level=1)
        label = fluid.data("gt_label", [-1, 1], "float32", lod_level=1)
        box = fluid.data("gt_box", [-1, 4], "float32", lod_level=1)
        diff = fluid.data("gt_difficult", [-1, 1], "int32", lod_level=1)
        m1 = fluid.metrics.DetectionMAP(det, label, box, diff, CLASSES, overlap_threshold=0.5)
        m2 = fluid.metrics.DetectionMAP(det, label, box, None, CLASSES, ap_version="11point")
        m3 = fluid.metrics.DetectionMAP(det, label, box, diff, CLASSES, evaluate_difficult=False)
    fetch = list(m1.get_map_var()) + list(m2.get_map_var()) + list(m3.get_map_var())
    return main, startup, fetch, [m1, m2, m3]


def run(fluid):
    """[per step: 6 values (cur, accum for each metric)], resetting before the last batch."""
    main, startup, fetch, metrics = build(fluid)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    rows = []
    for i, batch in enumerate(batches()):
        if i == 3:
            for m in metrics:
                m.reset(exe)
        rows.append(
            [
                float(np.array(v).reshape(-1)[0])
                for v in exe.run(main, feed=feed(fluid, batch), fetch_list=fetch)
            ]
        )
    return np.array(rows)


if __name__ == "__main__":
    import paddle.fluid as fluid

    here = os.path.dirname(os.path.abspath(__file__))
    np.savez(os.path.join(here, "fluid18_detection_map.npz"), maps=run(fluid))
