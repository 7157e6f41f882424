"""One rank of a 2-process collective training job (run by test_mpi_training.py under mpiexec).

usage: mpi_train_script.py MODE OUTDIR STEPS
(MODE: nccl2-compiled, nccl2-2places, nccl2-pe, collective)
Each rank starts from its own random initial values (the transpiled startup
program must broadcast rank 0's), trains on its half of every global batch,
and writes its parameters and the row indices it saw to OUTDIR/rank<r>.npz.
"""

from __future__ import annotations

import os
import sys

import numpy as np
from model import GLOBAL_BATCH, build, global_batch, transpile_collective
from oar import fluid

mode, outdir, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
rank = int(os.environ["PMI_RANK"])
size = int(os.environ["PMI_SIZE"])

main, startup, loss = build(seed=100 + rank)  # different initial values on every rank
transpile_collective(main, startup, rank, size, "collective" if mode == "collective" else "nccl2")
exe = fluid.Executor(fluid.CPUPlace())
exe.run(startup)
scope = fluid.global_scope()
names = [p.name for p in main.all_parameters()]
init = {n: np.array(scope.find_var(n).get_tensor()) for n in names}

if mode in ("nccl2-compiled", "nccl2-2places"):
    bs = fluid.BuildStrategy()
    bs.num_trainers, bs.trainer_id = size, rank
    places = fluid.cpu_places(2 if mode == "nccl2-2places" else 1)  # 2: threads, then MPI
    prog = fluid.CompiledProgram(main).with_data_parallel(
        loss_name=loss.name, build_strategy=bs, places=places
    )
    run = lambda feed: exe.run(prog, feed=feed, fetch_list=[loss])
elif mode == "nccl2-pe":
    pe = fluid.ParallelExecutor(
        use_cuda=False, loss_name=loss.name, main_program=main, num_trainers=size, trainer_id=rank
    )
    run = lambda feed: pe.run(fetch_list=[loss.name], feed=feed)
else:
    assert "c_allreduce_sum" in str(main) or "c_fused_allreduce_sum" in str(main)
    run = lambda feed: exe.run(main, feed=feed, fetch_list=[loss])

seen = []
share = GLOBAL_BATCH // size
for step in range(steps):
    x, y, idx = global_batch(step)
    part = slice(rank * share, (rank + 1) * share)
    seen.extend(idx[part].tolist())
    run({"x": x[part], "y": y[part]})

np.savez(
    os.path.join(outdir, f"rank{rank}.npz"),
    seen=np.array(seen),
    **{"param:" + n: np.array(scope.find_var(n).get_tensor()) for n in names},
    **{"init:" + n: v for n, v in init.items()},
)
