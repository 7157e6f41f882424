"""Golden data for sampled_softmax_with_cross_entropy with customized samples: run with the
Fluid 1.8.5 oracle.

    $FLUID18_PYTHON tests/kernels_cpu/data/fluid18_sample_logits.py
"""

import os

import numpy as np
import paddle.fluid as fluid

rng = np.random.RandomState(8)
N, K, T, S = 3, 8, 1, 3
logits = rng.uniform(-1, 1, (N, K)).astype("float32")
lab = np.array([[2], [5], [0]], "int64")
samples = np.array([[2, 1, 5, 7], [5, 1, 5, 7], [0, 1, 5, 7]], "int64")
probs = np.array([[0.3, 0.2, 0.25, 0.1], [0.25, 0.2, 0.25, 0.1], [0.15, 0.2, 0.25, 0.1]], "float32")
main, st = fluid.Program(), fluid.Program()
with fluid.program_guard(main, st):
    lv = fluid.data("lg", [None, K], "float32")
    lv.stop_gradient = False
    la = fluid.data("l", [None, 1], "int64")
    sv = fluid.data("s", [None, T + S], "int64")
    pv = fluid.data("p", [None, T + S], "float32")
    loss = fluid.layers.sampled_softmax_with_cross_entropy(
        lv, la, S, use_customized_samples=True, customized_samples=sv, customized_probabilities=pv
    )
    g = fluid.gradients([fluid.layers.reduce_sum(loss)], [lv])
exe = fluid.Executor(fluid.CPUPlace())
exe.run(st)
r = exe.run(main, feed={"lg": logits, "l": lab, "s": samples, "p": probs}, fetch_list=[loss] + g)
here = os.path.dirname(os.path.abspath(__file__))
np.savez(
    os.path.join(here, "fluid18_sample_logits.npz"),
    logits=logits,
    label=lab,
    samples=samples,
    probs=probs,
    loss=r[0],
    dlogits=r[1],
)
