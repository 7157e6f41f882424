"""SSD-style detection head + multiclass_nms on 1000 priors, against a hand-written PyTorch
equivalent (no torchvision).

Two feature maps (2 x 32 x 15 x 15 and 2 x 32 x 5 x 5), 4 priors per cell (1000 priors),
5 classes: 3x3 location and confidence convolutions, box decoding against the priors,
softmax, then per-class greedy NMS (score > 0.01, top 400 per class, IoU 0.45, keep 100 per
image) — oar's ``multi_box_head`` + ``detection_output`` against the same computation in
torch, from the same weights. Inference only.
"""

from __future__ import annotations

import math

import numpy as np
from benchlib import Benchmark, Unavailable, require

N, C_IN, CLS = 2, 32, 5
MAPS = [(15, 15), (5, 5)]
MIN_SIZES, MAX_SIZES = [30.0, 60.0], [60.0, 90.0]
IMAGE = 150
NMS = {"score": 0.01, "top_k": 400, "iou": 0.45, "keep": 100}
_rng = np.random.default_rng(11)
FEATS = [_rng.standard_normal((N, C_IN, h, w)).astype(np.float32) for h, w in MAPS]
PRIORS_PER_CELL = 4  # the min and sqrt(min * max) squares, then aspect ratios 2 and 1/2
WEIGHTS = []
for _ in MAPS:
    for out in (PRIORS_PER_CELL * 4, PRIORS_PER_CELL * CLS):
        WEIGHTS.append((_rng.standard_normal((out, C_IN, 3, 3)) * 0.05).astype(np.float32))


def priors() -> tuple:
    """[P, 4] normalised prior corners and [P, 4] variances, in prior_box's order."""
    out = []
    for (h, w), lo, hi in zip(MAPS, MIN_SIZES, MAX_SIZES):
        halves = [(lo / 2, lo / 2), (math.sqrt(lo * hi) / 2,) * 2]
        halves += [(lo * math.sqrt(a) / 2, lo / math.sqrt(a) / 2) for a in (2.0, 0.5)]
        sy, sx = IMAGE / h, IMAGE / w
        for i in range(h):
            for j in range(w):
                cx, cy = (j + 0.5) * sx, (i + 0.5) * sy
                out += [
                    [(cx - a) / IMAGE, (cy - b) / IMAGE, (cx + a) / IMAGE, (cy + b) / IMAGE]
                    for a, b in halves
                ]
    boxes = np.array(out, np.float32)
    return boxes, np.tile(np.array([[0.1, 0.1, 0.2, 0.2]], np.float32), (len(boxes), 1))


def oar_ssd():
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        feats = [fluid.data(f"f{i}", [N, C_IN, h, w], "float32") for i, (h, w) in enumerate(MAPS)]
        image = fluid.data("image", [N, 3, IMAGE, IMAGE], "float32")
        locs, confs, boxes, variances = L.multi_box_head(
            feats, image, IMAGE, CLS, [[2.0]] * 2, min_sizes=MIN_SIZES, max_sizes=MAX_SIZES,
            kernel_size=3, pad=1, min_max_aspect_ratios_order=True,
        )  # fmt: skip
        dets = L.detection_output(locs, confs, boxes, variances, 0, NMS["iou"], NMS["top_k"],
                                  NMS["keep"], NMS["score"])  # fmt: skip
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    weights = [p for p in main.global_block().all_parameters() if len(p.shape) == 4]
    for p, value in zip(weights, WEIGHTS):
        scope.find_var(p.name).get_tensor().set(value, fluid.CPUPlace())
    feed = {f"f{i}": f for i, f in enumerate(FEATS)}
    feed["image"] = np.zeros((N, 3, IMAGE, IMAGE), np.float32)

    def step():
        out = exe.run(main, feed=feed, fetch_list=[dets], scope=scope, return_numpy=False)[0]
        return np.array(out)

    return step


def torch_ssd():
    torch = require("torch")
    F = torch.nn.functional
    prior, var = (torch.from_numpy(a) for a in priors())
    feats = [torch.from_numpy(f) for f in FEATS]
    weights = [torch.from_numpy(w) for w in WEIGHTS]
    pw, ph = prior[:, 2] - prior[:, 0], prior[:, 3] - prior[:, 1]
    pcx, pcy = prior[:, 0] + pw / 2, prior[:, 1] + ph / 2

    def iou(box, rest):
        iw = (torch.minimum(box[2], rest[:, 2]) - torch.maximum(box[0], rest[:, 0])).clamp(min=0)
        ih = (torch.minimum(box[3], rest[:, 3]) - torch.maximum(box[1], rest[:, 1])).clamp(min=0)
        inter = iw * ih
        area = (box[2] - box[0]) * (box[3] - box[1])
        return inter / (area + (rest[:, 2] - rest[:, 0]) * (rest[:, 3] - rest[:, 1]) - inter)

    def nms(boxes, scores):
        idx = torch.nonzero(scores > NMS["score"]).reshape(-1)
        idx = idx[torch.sort(scores[idx], descending=True, stable=True).indices][: NMS["top_k"]]
        cand = boxes[idx]
        alive = torch.ones(len(idx), dtype=torch.bool)
        keep = []
        for i in range(len(idx)):
            if alive[i]:
                keep.append(i)
                alive[i + 1 :] &= iou(cand[i], cand[i + 1 :]) <= NMS["iou"]
        return idx[keep]

    @torch.no_grad()
    def step():
        locs, confs = [], []
        for k, f in enumerate(feats):
            for w, acc in ((weights[2 * k], locs), (weights[2 * k + 1], confs)):
                acc.append(F.conv2d(f, w, padding=1).permute(0, 2, 3, 1).reshape(N, -1))
        loc = torch.cat(locs, 1).reshape(N, -1, 4)
        prob = torch.softmax(torch.cat(confs, 1).reshape(N, -1, CLS), -1)
        cx = var[:, 0] * loc[..., 0] * pw + pcx
        cy = var[:, 1] * loc[..., 1] * ph + pcy
        bw, bh = torch.exp(var[:, 2] * loc[..., 2]) * pw, torch.exp(var[:, 3] * loc[..., 3]) * ph
        boxes = torch.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2], -1)
        rows = []
        for i in range(N):
            picked = [(c, k) for c in range(1, CLS) for k in nms(boxes[i], prob[i, :, c])]
            sc = torch.stack([prob[i, k, c] for c, k in picked])
            best = torch.sort(sc, descending=True, stable=True).indices[: NMS["keep"]]
            best = sorted(best.tolist(), key=lambda j: (picked[j][0], -float(sc[j]), j))
            for j in best:
                c, k = picked[j]
                rows.append(torch.cat([torch.tensor([float(c), float(sc[j])]), boxes[i, k]]))
        return torch.stack(rows).numpy()

    return step


def _check(results):
    if "oar" in results and "torch" in results:
        a, b = results["oar"], results["torch"]
        assert a.shape == b.shape, (a.shape, b.shape)
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


BENCHMARKS = [
    Benchmark(
        "ssd_head_nms",
        "SSD head (2 maps, 1000 priors, 5 classes) + detection_output NMS, batch 2 (torch: hand-written)",
        {"oar": oar_ssd, "torch": torch_ssd},
        targets={"oar/torch": 1.2},
        check=_check,
    ),
]
