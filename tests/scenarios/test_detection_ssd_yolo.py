"""Scenario: a small SSD-style detector and a YOLOv3-style head train on a synthetic
"find the bright square" task (loss falls) and decode boxes with NMS.

Each 32x32 image holds one or two bright squares on noise; the squares are the ground truth
(class 1 = small square, class 2 = large one for SSD; one class for YOLO). Each head trains
20 Adam steps on one batch of 4 images (the loss must fall by 40%: it learns them), then
decodes the batch with NMS.
"""

import numpy as np
from oar import fluid

L = fluid.layers


def make_batch(rng, n=4, size=32):
    """(images [n, 3, 32, 32], boxes per image as [k, 4] normalised corners, labels [k])."""
    imgs = rng.normal(0, 0.1, (n, 3, size, size)).astype("float32")
    boxes, labels = [], []
    for i in range(n):
        bs, ls = [], []
        for _ in range(rng.integers(1, 3)):
            side = int(rng.choice([8, 14]))
            y, x = rng.integers(0, size - side, 2)
            imgs[i, :, y : y + side, x : x + side] += 1.0
            bs.append([x / size, y / size, (x + side) / size, (y + side) / size])
            ls.append(1 if side == 8 else 2)
        boxes.append(np.array(bs, "float32"))
        labels.append(np.array(ls, "int32")[:, None])
    return imgs, boxes, labels


def _conv(x, c, stride):
    return L.conv2d(x, c, 3, stride, 1, act="relu")


def test_ssd_style_detector_trains_and_decodes():
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 1
    with fluid.program_guard(main, startup):
        image = fluid.data("image", [-1, 3, 32, 32], "float32")
        gt_box = fluid.data("gt_box", [-1, 4], "float32", lod_level=1)
        gt_label = fluid.data("gt_label", [-1, 1], "int32", lod_level=1)
        f1 = _conv(_conv(image, 8, 2), 16, 2)  # 8x8
        f2 = _conv(f1, 16, 2)  # 4x4
        f3 = _conv(f2, 16, 2)  # 2x2
        locs, confs, boxes, variances = L.multi_box_head(
            [f1, f2, f3], image, 32, 3, [[2.0], [2.0], [2.0]], 20, 90, flip=True
        )
        dets = L.detection_output(locs, confs, boxes, variances, nms_top_k=50, keep_top_k=5)
        test_prog = main.clone(for_test=True)
        loss = L.reduce_mean(L.ssd_loss(locs, confs, gt_box, gt_label, boxes, variances))
        fluid.optimizer.Adam(0.01).minimize(loss)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(0)
    place = fluid.CPUPlace()
    losses = []
    imgs, bx, lb = make_batch(rng)
    for _ in range(20):
        feed = {
            "image": imgs,
            "gt_box": fluid.create_lod_tensor(np.concatenate(bx), [[len(b) for b in bx]], place),
            "gt_label": fluid.create_lod_tensor(np.concatenate(lb), [[len(b) for b in lb]], place),
        }
        losses.append(float(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]))
    assert np.isfinite(losses).all()
    assert losses[-1] < 0.6 * losses[0], losses
    out = exe.run(
        test_prog, feed={"image": imgs}, fetch_list=[dets], scope=scope, return_numpy=False
    )[0]
    rows = np.array(out)
    lod = out.lod()[0]
    assert len(lod) == 5 and lod[-1] == rows.shape[0] and rows.shape[1] == 6  # 4 images
    assert set(rows[:, 0].astype(int)) <= {1, 2}  # background never reported
    assert ((rows[:, 1] > 0) & (rows[:, 1] <= 1)).all()


def test_yolov3_style_head_trains_and_decodes():
    anchors = [8, 8, 14, 14, 20, 20]
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 1
    with fluid.program_guard(main, startup):
        image = fluid.data("image", [-1, 3, 32, 32], "float32")
        gt_box = fluid.data("gt_box", [-1, 2, 4], "float32")
        gt_label = fluid.data("gt_label", [-1, 2], "int32")
        img_size = fluid.data("img_size", [-1, 2], "int32")
        feat = _conv(_conv(_conv(image, 8, 2), 16, 2), 16, 2)  # 4x4, downsample 8
        head = L.conv2d(feat, 3 * (5 + 2), 1)
        loss = L.reduce_mean(L.yolov3_loss(head, gt_box, gt_label, anchors, [0, 1, 2], 2, 0.7, 8))
        boxes, scores = L.yolo_box(head, img_size, anchors, 2, 0.01, 8)
        dets = L.multiclass_nms(
            boxes, L.transpose(scores, [0, 2, 1]), 0.01, 20, 5, 0.45, False, background_label=-1
        )
        fluid.optimizer.Adam(0.01).minimize(loss)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(1)
    losses = []
    imgs, bx, lb = make_batch(rng)
    for _ in range(20):
        gt = np.zeros((4, 2, 4), "float32")
        lab = np.zeros((4, 2), "int32")
        for i, (b, label) in enumerate(zip(bx, lb)):
            gt[i, : len(b)] = np.stack([(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2,
                                        b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], 1)  # fmt: skip
            lab[i, : len(b)] = label[:, 0] - 1
        feed = {
            "image": imgs,
            "gt_box": gt,
            "gt_label": lab,
            "img_size": np.full((4, 2), 32, "int32"),
        }
        lv, out = exe.run(main, feed=feed, fetch_list=[loss, dets], scope=scope, return_numpy=False)
        losses.append(float(np.array(lv).reshape(-1)[0]))
    assert losses[-1] < 0.6 * losses[0], losses
    rows = np.array(out)
    assert rows.shape[1] == 6 and len(out.lod()[0]) == 5
    assert (rows[:, 2:] >= 0).all() and (rows[:, 2:] <= 31).all()  # clipped to the 32 x 32 image
