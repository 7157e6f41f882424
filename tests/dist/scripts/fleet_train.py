"""One worker of a 2-process fleet job (run by tests/dist/test_fleet.py through launch).

usage: fleet_train.py MODE OUTDIR STEPS  (MODE: nccl2 or collective). The network and
data are those of tests/dist/model.py; each worker draws its own initial values
(fleet's startup program must broadcast worker 0's) and trains on its half of
every global batch. Writes its parameters and fetched losses to OUTDIR/rank<r>.npz;
the first worker also saves persistables and an inference model.
"""

import os
import sys

import numpy as np
from oar import fluid
from oar.fluid.incubate.fleet.base import role_maker
from oar.fluid.incubate.fleet.collective import DistributedStrategy, fleet

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from model import GLOBAL_BATCH, global_batch

mode, outdir, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
fleet.init(role_maker.PaddleCloudRoleMaker(is_collective=True))
rank, size = fleet.worker_index(), fleet.worker_num()

main, startup = fluid.Program(), fluid.Program()
main.random_seed = startup.random_seed = 100 + rank  # different initial values per worker
with fluid.program_guard(main, startup), fluid.unique_name.guard():
    x = fluid.layers.data("x", [8])
    y = fluid.layers.data("y", [1])
    h = fluid.layers.fc(x, 16, act="relu")
    pred = fluid.layers.fc(h, 1)
    loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, y))
    strategy = DistributedStrategy()
    strategy.mode = mode
    if mode == "collective":
        strategy.collective_mode = "grad_allreduce"
    opt = fleet.distributed_optimizer(fluid.optimizer.Momentum(0.05, 0.9), strategy=strategy)
    opt.minimize(loss)

place = fluid.CUDAPlace(int(os.environ.get("FLAGS_selected_gpus", "0")))
exe = fluid.Executor(place)
exe.run(fleet.startup_program)
scope = fluid.global_scope()
names = [p.name for p in main.all_parameters()]
init = {n: np.array(scope.find_var(n).get_tensor()) for n in names}
share = GLOBAL_BATCH // size
losses = []
for step in range(steps):
    xb, yb, _ = global_batch(step)
    part = slice(rank * share, (rank + 1) * share)
    (value,) = exe.run(fleet.main_program, feed={"x": xb[part], "y": yb[part]}, fetch_list=[loss])
    losses.append(np.ravel(value)[0])
fleet.save_persistables(exe, os.path.join(outdir, "persistables"))
fleet.save_inference_model(exe, os.path.join(outdir, "inference"), ["x"], [pred])
np.savez(
    os.path.join(outdir, f"rank{rank}.npz"),
    losses=np.array(losses),
    first=np.array(fleet.is_first_worker()),
    **{"param:" + n: np.array(scope.find_var(n).get_tensor()) for n in names},
    **{"init:" + n: v for n, v in init.items()},
)
