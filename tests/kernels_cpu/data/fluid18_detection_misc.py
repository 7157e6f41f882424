"""affine_channel (with gradients) and box_decoder_and_assign from the real Fluid 1.8.5.

Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_detection_misc.py``
(writes ``fluid18_detection_misc.npz``).
"""

import numpy as np


def inputs():
    rng = np.random.RandomState(8)
    xy = rng.rand(5, 2) * 40
    prior = np.concatenate([xy, xy + rng.rand(5, 2) * 30 + 5], 1).astype("float32")
    return {
        "x": rng.rand(2, 3, 4, 5).astype("float32"),
        "xh": rng.rand(2, 4, 5, 3).astype("float32"),
        "scale": rng.rand(3).astype("float32") + 0.5,
        "bias": rng.rand(3).astype("float32"),
        "prior": prior,
        "pvar": np.array([0.1, 0.1, 0.2, 0.2], "float32"),
        "deltas": (rng.randn(5, 3 * 4) * 0.5).astype("float32"),
        "score": rng.rand(5, 3).astype("float32"),
    }


def build(fluid):
    feed = inputs()
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = {k: fluid.data(k, list(a.shape), a.dtype.name) for k, a in feed.items()}
        for k in ("x", "xh", "scale", "bias"):
            v[k].stop_gradient = False
        a1 = L.affine_channel(v["x"], v["scale"], v["bias"])
        a2 = L.affine_channel(v["xh"], v["scale"], v["bias"], data_layout="NHWC", act="relu")
        w1 = L.assign(np.random.RandomState(1).rand(2, 3, 4, 5).astype("float32"))
        w2 = L.assign(np.random.RandomState(2).rand(2, 4, 5, 3).astype("float32"))
        loss = L.reduce_sum(a1 * w1) + L.reduce_sum(a2 * w2)
        grads = fluid.gradients([loss], [v["x"], v["xh"], v["scale"], v["bias"]])
        dec, assign = L.box_decoder_and_assign(
            v["prior"], v["pvar"], v["deltas"], v["score"], 4.135
        )
    return main, startup, feed, [a1, a2] + grads + [dec, assign]


NAMES = ["affine_nchw", "affine_nhwc_relu", "grad_x", "grad_xh", "grad_scale", "grad_bias",
         "decode_box", "assign_box"]  # fmt: skip

if __name__ == "__main__":
    from _fluid18 import write_golden

    write_golden(__file__, build, NAMES)
