"""Golden data for Lookahead, decoupled weight decay, Dpsgd and ErrorClipByValue: run with
the Fluid 1.8.5 oracle.

    $FLUID18_PYTHON tests/optimizer/data/fluid18_optimizer_extra.py

A two-layer net on fixed data, 7 steps; records the losses and the final weights.
"""

import json
import os

import numpy as np
import paddle.fluid as fluid

rng = np.random.RandomState(3)
X = rng.rand(8, 4).astype("float32")
Y = rng.rand(8, 1).astype("float32")
W1 = rng.uniform(-1, 1, (4, 5)).astype("float32")
W2 = rng.uniform(-1, 1, (5, 1)).astype("float32")


def run(make_opt, error_clip=False):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 4], "float32")
        y = fluid.data("y", [None, 1], "float32")
        init = fluid.initializer.NumpyArrayInitializer
        h = fluid.layers.fc(
            x,
            5,
            act="tanh",
            param_attr=fluid.ParamAttr("w1", initializer=init(W1)),
            bias_attr=False,
        )
        if error_clip:
            h.error_clip = fluid.clip.ErrorClipByValue(max=0.02, min=-0.01)
        p = fluid.layers.fc(
            h, 1, param_attr=fluid.ParamAttr("w2", initializer=init(W2)), bias_attr=False
        )
        loss = fluid.layers.reduce_mean(fluid.layers.square(p - y))
        make_opt().minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    losses = [
        float(exe.run(main, feed={"x": X, "y": Y}, fetch_list=[loss])[0][0]) for _ in range(7)
    ]
    scope = fluid.global_scope()
    return {
        "losses": losses,
        "w1": np.array(scope.find_var("w1").get_tensor()).tolist(),
        "w2": np.array(scope.find_var("w2").get_tensor()).tolist(),
    }


AdamW = fluid.contrib.extend_with_decoupled_weight_decay(fluid.optimizer.Adam)
out = {
    "data": {"x": X.tolist(), "y": Y.tolist(), "w1": W1.tolist(), "w2": W2.tolist()},
    "lookahead": run(
        lambda: fluid.optimizer.LookaheadOptimizer(fluid.optimizer.SGD(0.5), alpha=0.3, k=3)
    ),
    "adamw": run(lambda: AdamW(weight_decay=0.1, learning_rate=0.05)),
    "adamw_filtered": run(
        lambda: AdamW(
            weight_decay=0.2, apply_decay_param_fun=lambda n: n == "w1", learning_rate=0.05
        )
    ),
    "dpsgd": run(
        lambda: fluid.optimizer.DpsgdOptimizer(
            learning_rate=0.3, clip=0.5, batch_size=8.0, sigma=0.0
        )
    ),
    "error_clip": run(lambda: fluid.optimizer.SGD(0.5), error_clip=True),
}
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "fluid18_optimizer_extra.json"), "w") as f:
    json.dump(out, f)
