"""A static-graph job that checkpoints every step and resumes from the latest checkpoint.

argv: work_dir steps kill_at. Each rank trains a small regression with Adam on
its own data (batch by step and rank), saves with ``fluid.io.save_persistables``
after every step and waits for its peer (an MPI barrier), so the ranks are one
job; on start the ranks agree on the latest step all of them saved. On the first attempt (``OAR_LAUNCH_RESTART=0``) rank 1 kills itself at
step ``kill_at``; under ``launch --max_restarts`` the job starts again, loads
the latest checkpoint and goes on. Losses go to ``losses.<rank>.<attempt>``.
"""

import os
import signal
import sys

import numpy as np
from oar import fluid
from oar_dist.collective import make_backend

work, steps, kill_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rank = int(os.environ["PADDLE_TRAINER_ID"])
attempt = int(os.environ.get("OAR_LAUNCH_RESTART", "0"))
backend = make_backend("mpi")
ckpt_root = os.path.join(work, f"ckpt.{rank}")

main, startup = fluid.Program(), fluid.Program()
main.random_seed = startup.random_seed = 7
with fluid.program_guard(main, startup):
    x = fluid.data("x", [None, 5], "float32")
    y = fluid.data("y", [None, 1], "float32")
    h = fluid.layers.fc(x, 8, act="tanh")
    pred = fluid.layers.fc(h, 1)
    loss = fluid.layers.reduce_mean(fluid.layers.square(pred - y))
    fluid.optimizer.Adam(learning_rate=0.05).minimize(loss)

exe = fluid.Executor(fluid.CUDAPlace(fluid.dygraph.ParallelEnv().dev_id))
exe.run(startup)
names = os.listdir(ckpt_root) if os.path.isdir(ckpt_root) else []
done = [int(n[5:]) for n in names if n.startswith("step_") and n[5:].isdigit()]
# resume from the latest step every rank has saved (a rank may have died mid-save)
latest = int(backend.allreduce(np.array([max(done, default=-1)]), op="min")[0])
start = latest + 1
if latest >= 0:
    fluid.io.load_persistables(exe, os.path.join(ckpt_root, f"step_{latest}"), main)
    print(f"rank {rank} resumes at step {start}", flush=True)

with open(os.path.join(work, f"losses.{rank}.{attempt}"), "w") as out:
    for step in range(start, steps):
        if attempt == 0 and rank == 1 and step == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        rng = np.random.RandomState(1000 * step + rank)
        xb = rng.rand(6, 5).astype("float32")
        yb = xb.sum(1, keepdims=True).astype("float32")
        (value,) = exe.run(main, feed={"x": xb, "y": yb}, fetch_list=[loss])
        out.write(f"{step} {float(np.ravel(value)[0])!r}\n")
        out.flush()
        fluid.io.save_persistables(exe, os.path.join(ckpt_root, f"step_{step}"), main)
        backend.barrier()
