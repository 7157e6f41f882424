"""Train a small MLP with Adam for three steps and print, as JSON, the losses, the first weight's
sum and which compiled loops went parallel (run by the thread tests under several
``OMP_NUM_THREADS``; argv: input width, second activation)."""

import json
import sys

import numpy as np
from oar import fluid

width, act = int(sys.argv[1]), sys.argv[2]
main, start = fluid.Program(), fluid.Program()
main.random_seed = start.random_seed = 5
with fluid.program_guard(main, start):
    x = fluid.data("x", [None, width], "float32")
    y = fluid.data("y", [None, 1], "int64")
    h = fluid.layers.fc(x, 512, act="relu")
    h = fluid.layers.fc(h, 512, act=act)
    pred = fluid.layers.fc(h, 10, act="softmax")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, y))
    fluid.optimizer.Adam(0.01).minimize(loss)
exe = fluid.Executor(fluid.CPUPlace())
exe.run(start)
rng = np.random.default_rng(0)
feed = {"x": rng.standard_normal((64, width)).astype("float32"), "y": rng.integers(0, 10, (64, 1))}
out = [exe.run(main, feed=feed, fetch_list=[loss])[0].tolist() for _ in range(3)]
w = np.asarray(fluid.global_scope().find_var(main.all_parameters()[0].name).get_tensor())
went_parallel = None
if "oar_kernels_numba" in sys.modules:
    from oar.api import registries
    from oar_kernels_numba import _fused_loops, optimizer

    if registries().kernels.lookup("adam", "cpu", "float32").plugin == "kernels_numba":
        # relu_grad is fused, serially; bias + relu runs in place where the product dies
        loops = (
            (_fused_loops.bias_relu_rows, _fused_loops.bias_relu_rows_into),
            (optimizer._adam,),
        )
        went_parallel = [any(bool(f.parallel.signatures) for f in fs) for fs in loops]
print(json.dumps([out, float(w.astype("float64").sum()), went_parallel]))
