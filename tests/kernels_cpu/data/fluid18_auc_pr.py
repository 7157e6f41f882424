"""Golden data for auc(curve="PR") and metrics.Auc(curve="PR"): run with Fluid 1.8.5.

    $FLUID18_PYTHON tests/kernels_cpu/data/fluid18_auc_pr.py

Writes fluid18_auc_pr.npz next to this file: three batches of predictions and labels,
the cumulative and sliding-window AUC after each batch for both curves, and the
metrics.Auc value over all batches. (Fluid 1.8.5 computes the same area for "PR" as for
"ROC".)
"""

import os

import numpy as np
import paddle.fluid as fluid

rng = np.random.RandomState(5)
p = rng.uniform(0, 1, (30, 1)).astype("float32")
pred = np.concatenate([1 - p, p], 1)
label = (rng.uniform(0, 1, (30, 1)) < p).astype("int64")
out = {"pred": pred, "label": label}
for curve in ("ROC", "PR"):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 2], "float32")
        lab = fluid.data("l", [None, 1], "int64")
        a, ba, _ = fluid.layers.auc(x, lab, curve=curve, num_thresholds=15, slide_steps=2)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    got = []
    for i in range(3):
        feed = {"x": pred[i * 10 : (i + 1) * 10], "l": label[i * 10 : (i + 1) * 10]}
        got.append([float(np.array(v)[0]) for v in exe.run(main, feed=feed, fetch_list=[a, ba])])
    out[curve + "_auc"] = np.array(got)
    m = fluid.metrics.Auc("m", curve=curve, num_thresholds=15)
    m.update(pred, label)
    out[curve + "_metric"] = np.array(m.eval())
np.savez(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_auc_pr.npz"), **out)
