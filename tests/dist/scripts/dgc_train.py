"""One rank of a 2-process DGCMomentumOptimizer job (run by test_dgc_collective.py under mpiexec).

usage: dgc_train.py OUTDIR BEGIN PLACES MODE
MODE "transpiler": the program is transpiled in nccl2 mode and run data-parallel on PLACES
places per rank (threads inside a rank, MPI between ranks); MODE "fleet": the collective
fleet wraps the optimizer (one place per rank). Each rank trains on its share of every
global batch and writes its parameter to OUTDIR/rank<r>.npz.
"""

from __future__ import annotations

import os
import sys

import numpy as np
from dgc_model import batches, build
from model import transpile_collective
from oar import fluid
from oar.fluid.incubate.fleet.base import role_maker
from oar.fluid.incubate.fleet.collective import DistributedStrategy, fleet

outdir, begin, places, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rank, size = int(os.environ["PMI_RANK"]), int(os.environ["PMI_SIZE"])

exe = fluid.Executor(fluid.CPUPlace())
if mode == "fleet":
    fleet.init(
        role_maker.UserDefinedCollectiveRoleMaker(
            rank, [f"127.0.0.1:{6290 + i}" for i in range(size)]
        )
    )
    main, startup, loss = build(
        num_trainers=size,
        begin=begin,
        wrap=lambda opt: fleet.distributed_optimizer(opt, DistributedStrategy()),
    )
    exe.run(fleet.startup_program)
    prog = fleet.main_program
else:
    main, startup, loss = build(num_trainers=size * places, begin=begin)
    transpile_collective(main, startup, rank, size, "nccl2", port=6270)
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
run_program = prog._runner._program if hasattr(prog, "_runner") else prog
types = [op.type for op in run_program.global_block().ops]
np.savez(
    os.path.join(outdir, f"rank{rank}.npz"),
    w=np.array(fluid.global_scope().find_var("w").get_tensor()),
    losses=np.array(losses),
    allgathers=types.count("c_allgather"),
    allreduces=types.count("c_allreduce_sum") + types.count("c_fused_allreduce_sum"),
)
