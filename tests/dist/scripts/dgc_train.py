"""One rank of a 2-process DGCMomentumOptimizer job (run by test_dgc_collective.py under mpiexec).

usage: dgc_train.py OUTDIR BEGIN PLACES
The program is transpiled in nccl2 mode and run data-parallel on PLACES places per rank
(threads inside a rank, MPI between ranks); each rank trains on its half of every global batch and writes its parameter to
OUTDIR/rank<r>.npz.
"""

from __future__ import annotations

import os
import sys

import numpy as np
from dgc_model import batches, build
from model import transpile_collective
from oar import fluid

outdir, begin, places = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rank, size = int(os.environ["PMI_RANK"]), int(os.environ["PMI_SIZE"])

main, startup, loss = build(num_trainers=size * places, begin=begin)
transpile_collective(main, startup, rank, size, "nccl2", port=6270)
exe = fluid.Executor(fluid.CPUPlace())
exe.run(startup)
bs = fluid.BuildStrategy()
bs.num_trainers, bs.trainer_id = size, rank
prog = fluid.CompiledProgram(main).with_data_parallel(
    loss_name=loss.name, build_strategy=bs, places=fluid.cpu_places(places)
)
share = 8 // size
losses = []
for x, y in batches():
    part = slice(rank * share, (rank + 1) * share)
    (out,) = exe.run(prog, feed={"x": x[part], "y": y[part]}, fetch_list=[loss])
    losses.append(float(np.asarray(out).reshape(-1)[0]))
types = [op.type for op in prog._runner._program.global_block().ops]
np.savez(
    os.path.join(outdir, f"rank{rank}.npz"),
    w=np.array(fluid.global_scope().find_var("w").get_tensor()),
    losses=np.array(losses),
    allgathers=types.count("c_allgather"),
    allreduces=types.count("c_allreduce_sum") + types.count("c_fused_allreduce_sum"),
)
