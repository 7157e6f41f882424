"""A fleet job that checkpoints every step and resumes from the latest checkpoint on start.

argv: work_dir steps kill_at. Two workers train a small regression with Adam
(fleet collective mode: gradients all-reduced), each on its own half of every
batch. After each step the first worker saves with ``fleet.save_persistables``
(``fluid.io.save_persistables``: parameters, Adam's moments and beta powers)
and the workers meet at a barrier. On start every worker loads the latest
checkpoint. On the first attempt (``OAR_LAUNCH_RESTART=0``) worker 1 kills
itself at step ``kill_at``; under ``launch --max_restarts`` the job starts
again. Losses go to ``losses.<rank>.<attempt>``.
"""

import os
import signal
import sys

import numpy as np
from oar import fluid
from oar.fluid.incubate.fleet.base import role_maker
from oar.fluid.incubate.fleet.collective import DistributedStrategy, fleet

work, steps, kill_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
attempt = int(os.environ.get("OAR_LAUNCH_RESTART", "0"))
fleet.init(role_maker.PaddleCloudRoleMaker(is_collective=True))
rank = fleet.worker_index()
ckpt_root = os.path.join(work, "ckpt")

main, startup = fluid.Program(), fluid.Program()
main.random_seed = startup.random_seed = 7
with fluid.program_guard(main, startup):
    x = fluid.data("x", [None, 5], "float32")
    y = fluid.data("y", [None, 1], "float32")
    h = fluid.layers.fc(x, 8, act="tanh")
    pred = fluid.layers.fc(h, 1)
    loss = fluid.layers.reduce_mean(fluid.layers.square(pred - y))
    strategy = DistributedStrategy()
    strategy.mode, strategy.collective_mode = "collective", "grad_allreduce"
    fleet.distributed_optimizer(fluid.optimizer.Adam(learning_rate=0.05), strategy).minimize(loss)

exe = fluid.Executor(fluid.CUDAPlace(fluid.dygraph.ParallelEnv().dev_id))
exe.run(fleet.startup_program)
names = os.listdir(ckpt_root) if os.path.isdir(ckpt_root) else []
done = [int(n[5:]) for n in names if n.startswith("step_") and n[5:].isdigit()]
start = 0
if done:
    fluid.io.load_persistables(exe, os.path.join(ckpt_root, f"step_{max(done)}"), main)
    start = max(done) + 1
    print(f"rank {rank} resumes at step {start}", flush=True)

with open(os.path.join(work, f"losses.{rank}.{attempt}"), "w") as out:
    for step in range(start, steps):
        if attempt == 0 and rank == 1 and step == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        rng = np.random.RandomState(1000 * step + rank)
        xb = rng.rand(6, 5).astype("float32")
        yb = xb.sum(1, keepdims=True).astype("float32")
        (value,) = exe.run(fleet.main_program, feed={"x": xb, "y": yb}, fetch_list=[loss])
        out.write(f"{step} {float(np.ravel(value)[0])!r}\n")
        out.flush()
        fleet.save_persistables(exe, os.path.join(ckpt_root, f"step_{step}"))
        fleet.barrier_worker()
