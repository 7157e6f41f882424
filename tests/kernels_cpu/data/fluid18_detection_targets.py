"""bipartite_match, target_assign, ssd_loss (with its gradients) and multi_box_head from the
real Fluid 1.8.5.

``build(fluid)`` builds the same program with either framework from the same seeded inputs;
``set_params`` gives multi_box_head's convolutions the same seeded weights in both.
Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_detection_targets.py``
(writes ``fluid18_detection_targets.npz``).
"""

import numpy as np
from _fluid18 import data_vars

GT_PER_IMAGE = [2, 3]


def inputs():
    rng = np.random.RandomState(21)
    n, p, c = 2, 12, 4
    xy = rng.rand(p, 2) * 0.7
    prior = np.concatenate([xy, xy + rng.rand(p, 2) * 0.3 + 0.1], axis=1).astype("float32")
    gt = prior[[1, 4, 2, 7, 9]] + (rng.randn(5, 4) * 0.03).astype("float32")
    dist = rng.rand(5, 6).astype("float32")
    dist[dist < 0.3] = 0.0
    return {
        "prior": prior,
        "prior_var": np.tile(np.array([[0.1, 0.1, 0.2, 0.2]], "float32"), (p, 1)),
        "gt_box": gt,
        "gt_label": np.array([[1], [3], [2], [1], [2]], "int32"),
        "loc": (rng.randn(n, p, 4) * 0.2).astype("float32"),
        "conf": rng.randn(n, p, c).astype("float32"),
        "dist": dist,
        "assign_in": rng.rand(5, 6, 3).astype("float32"),
        "match": np.array([[0, -1, 1, -1, 0, -1], [2, 1, -1, -1, 0, -1]], "int32"),
        "feat1": rng.rand(2, 3, 4, 4).astype("float32"),
        "feat2": rng.rand(2, 3, 2, 2).astype("float32"),
        "feat3": rng.rand(2, 3, 1, 1).astype("float32"),
        "image": rng.rand(2, 3, 32, 32).astype("float32"),
    }


LOD_INPUTS = {k: GT_PER_IMAGE for k in ("gt_box", "gt_label", "dist", "assign_in")}


def build(fluid):
    feed = inputs()
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = data_vars(fluid, feed, LOD_INPUTS)
        v["loc"].stop_gradient = False
        v["conf"].stop_gradient = False
        idx, dist = L.bipartite_match(v["dist"])
        idx2, dist2 = L.bipartite_match(v["dist"], "per_prediction", 0.5)
        out, w = L.target_assign(v["assign_in"], v["match"], mismatch_value=-1)
        loss = L.ssd_loss(
            v["loc"], v["conf"], v["gt_box"], v["gt_label"], v["prior"], v["prior_var"]
        )
        loss2 = L.ssd_loss(v["loc"], v["conf"], v["gt_box"], v["gt_label"], v["prior"], [0.1, 0.1, 0.2, 0.2],
                           neg_pos_ratio=2.0, normalize=False, match_type="bipartite")  # fmt: skip
        g_loc, g_conf = fluid.gradients([L.reduce_sum(loss)], [v["loc"], v["conf"]])
        mloc, mconf, mbox, mvar = L.multi_box_head(
            [v["feat1"], v["feat2"], v["feat3"]],
            v["image"],
            32,
            4,
            [[2.0], [2.0, 3.0], [2.0]],
            20,
            90,
            flip=True,
            kernel_size=3,
            pad=1,
        )
    outs = [idx, dist, idx2, dist2, out, w, loss, loss2, g_loc, g_conf, mloc, mconf, mbox, mvar]
    return main, startup, feed, outs


NAMES = ["match_idx", "match_dist", "match_pp_idx", "match_pp_dist", "assign_out", "assign_w",
         "ssd_loss", "ssd_loss_unnormalized", "ssd_loss_grad_loc", "ssd_loss_grad_conf",
         "mbox_loc", "mbox_conf", "mbox_boxes", "mbox_vars"]  # fmt: skip


def set_params(fluid, main, scope):
    """Seeded weights for every parameter, in name order."""
    rng = np.random.RandomState(3)
    for p in sorted(main.global_block().all_parameters(), key=lambda p: p.name):
        value = (rng.rand(*p.shape) - 0.5).astype("float32")
        scope.find_var(p.name).get_tensor().set(value, fluid.CPUPlace())


if __name__ == "__main__":
    from _fluid18 import write_golden

    write_golden(__file__, build, NAMES, setup=set_params)
