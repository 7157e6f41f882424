"""retinanet_detection_output from the real Fluid 1.8.5.

Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_detection_retina.py``
(writes ``fluid18_detection_retina.npz``).
"""

import os

import numpy as np

LEVELS = [(4, 4), (2, 2)]
A, C = 2, 3


def inputs():
    rng = np.random.RandomState(51)
    feed = {"im_info": np.array([[64, 64, 1.0], [48, 60, 2.0]], "float32")}
    for k, (h, w) in enumerate(LEVELS):
        m = h * w * A
        xy = rng.rand(m, 2) * 50
        feed[f"anchors{k}"] = np.concatenate([xy, xy + rng.rand(m, 2) * 20 + 6], 1).astype(
            "float32"
        )
        feed[f"bboxes{k}"] = (rng.randn(2, m, 4) * 0.2).astype("float32")
        feed[f"scores{k}"] = (rng.rand(2, m, C) ** 3).astype("float32")
    return feed


def build(fluid):
    feed = inputs()
    L = fluid.layers
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = {k: fluid.data(k, list(a.shape), a.dtype.name) for k, a in feed.items()}
        n = len(LEVELS)
        out = L.retinanet_detection_output(
            [v[f"bboxes{k}"] for k in range(n)], [v[f"scores{k}"] for k in range(n)],
            [v[f"anchors{k}"] for k in range(n)], v["im_info"], 0.05, 20, 12, 0.4,
        )  # fmt: skip
    return main, startup, feed, [out]


NAMES = ["out"]

if __name__ == "__main__":
    import paddle.fluid as fluid

    main, startup, feed, outs = build(fluid)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    res = exe.run(main, feed=feed, fetch_list=outs, return_numpy=False)
    here = os.path.dirname(os.path.abspath(__file__))
    np.savez(os.path.join(here, "fluid18_detection_retina.npz"), out=np.array(res[0]),
             out_lod=np.array(res[0].lod()[-1], "int64"))  # fmt: skip
