"""Golden data for data_norm with per-slot statistics (slot_dim > 0): run with Fluid 1.8.5.

    $FLUID18_PYTHON tests/kernels_cpu/data/fluid18_data_norm_slot.py

Writes fluid18_data_norm_slot.npz next to this file: for each case the input, the
summaries set before the run, Y and the gradients of sum(Y * W) with respect to X, the
summaries and (with enable_scale_and_shift) scale_w and bias. A slot whose first value is
(nearly) zero is "not shown" in that row.
"""

import os

import numpy as np
import paddle.fluid as fluid

rng = np.random.RandomState(11)
out = {}


def run(tag, x, slot_dim, sas, eps):
    n, c = x.shape
    stats = {
        "batch_size": rng.uniform(2, 10, c).astype("float32"),
        "batch_sum": rng.uniform(-3, 3, c).astype("float32"),
        "batch_square_sum": rng.uniform(2, 10, c).astype("float32"),
    }
    w = rng.uniform(-1, 1, x.shape).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        xv = fluid.data("x", [None, c], "float32")
        xv.stop_gradient = False
        pa = {"scale_w": 1.5, "bias": 0.25} if sas else None
        y = fluid.layers.data_norm(
            xv, epsilon=eps, slot_dim=slot_dim, enable_scale_and_shift=sas, param_attr=pa
        )
        params = main.all_parameters()
        loss = fluid.layers.reduce_sum(y * fluid.layers.assign(w))
        grads = fluid.gradients([loss], [xv] + params)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    for k, v in stats.items():
        scope.find_var("dn." + k).get_tensor().set(v, fluid.CPUPlace())
    res = exe.run(main, feed={"x": x}, fetch_list=[y] + grads, scope=scope)
    names = ["y", "dx"] + ["d" + p.name.split(".")[1] for p in params]
    out[f"{tag}_x"], out[f"{tag}_w"] = x, w
    for k, v in stats.items():
        out[f"{tag}_{k}"] = v
    for k, v in zip(names, res):
        out[f"{tag}_{k}"] = np.asarray(v)


def slotted(n, slots, slot_dim):
    x = rng.uniform(-2, 2, (n, slots * slot_dim)).astype("float32")
    hide = rng.uniform(0, 1, (n, slots)) < 0.35
    for k in range(slots):
        x[hide[:, k], k * slot_dim] = 0.0
    x[0, 0] = 5e-8  # below the show threshold
    x[1, slot_dim] = -2e-7  # above it
    x[:, (slots - 1) * slot_dim] = 0.0  # a slot shown in no row
    return x


run("plain", slotted(6, 4, 3), 3, False, 1e-4)
run("sas", slotted(6, 4, 3), 3, True, 1e-5)
run("two", slotted(5, 3, 2), 2, True, 1e-3)
np.savez(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_data_norm_slot.npz"), **out
)
