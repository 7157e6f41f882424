"""A 2-rank dygraph DataParallel run of a linear model; rank 0 saves its parameters and losses.

Run by tests/dist/test_dygraph_data_parallel.py through ``oar.distributed.launch``.
"""

import sys

import numpy as np
from oar import fluid

out_path, steps = sys.argv[1], int(sys.argv[2])
env = fluid.dygraph.ParallelEnv()
rng = np.random.RandomState(0)
X = rng.rand(steps, 8, 4).astype("float32")
Y = rng.rand(steps, 8, 1).astype("float32")

with fluid.dygraph.guard(fluid.CUDAPlace(env.dev_id)):
    strategy = fluid.dygraph.prepare_context()
    # each rank its own random init: DataParallel starts all from rank 0's
    np.random.seed(env.local_rank)
    model = fluid.dygraph.Linear(4, 1)
    model = fluid.dygraph.DataParallel(model, strategy)
    opt = fluid.optimizer.SGD(learning_rate=0.1, parameter_list=model.parameters())
    w0 = {k: v.numpy() for k, v in model.state_dict().items()}
    losses = []
    for step in range(steps):
        half = slice(env.local_rank * 4, env.local_rank * 4 + 4)
        x = fluid.dygraph.to_variable(X[step][half])
        y = fluid.dygraph.to_variable(Y[step][half])
        loss = fluid.layers.reduce_mean(fluid.layers.square(model(x) - y))
        losses.append(float(loss.numpy().reshape(-1)[0]))
        loss = model.scale_loss(loss)
        loss.backward()
        model.apply_collective_grads()
        opt.minimize(loss)
        model.clear_gradients()
    final = {k: v.numpy() for k, v in model.state_dict().items()}
    np.savez(
        f"{out_path}.{env.local_rank}.npz",
        losses=np.array(losses),
        **{"w0." + k: v for k, v in w0.items()},
        **{"w." + k: v for k, v in final.items()},
    )
