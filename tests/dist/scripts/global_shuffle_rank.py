"""One trainer of a 2-process job (run by tests/dist/test_global_shuffle.py under mpiexec).

usage: global_shuffle_rank.py OUTDIR N. Trainer r loads its own file of N records (ids
r * 1000 + i), global_shuffle(fleet)s them with the other trainer, trains one pass with
train_from_dataset, and writes the ids it holds and the sizes to OUTDIR/rank<r>.json.
"""

import json
import os
import random
import sys

from oar import fluid
from oar.fluid.incubate.fleet.base import role_maker
from oar.fluid.incubate.fleet.collective import fleet

outdir, n = sys.argv[1], int(sys.argv[2])
rank, size = int(os.environ["PMI_RANK"]), int(os.environ["PMI_SIZE"])
fleet.init(
    role_maker.UserDefinedCollectiveRoleMaker(rank, [f"127.0.0.1:{6170 + i}" for i in range(size)])
)
random.seed(rank)

path = os.path.join(outdir, f"part-{rank}")
with open(path, "w") as f:
    for i in range(n):
        f.write(f"1 {rank * 1000 + i} 1 {float(i % 7)}\n")

main, start = fluid.Program(), fluid.Program()
with fluid.program_guard(main, start):
    ids = fluid.data("ids", [None, 1], "int64")
    y = fluid.data("y", [None, 1])
    emb = fluid.layers.embedding(ids, [size * 1000, 2])
    loss = fluid.layers.mean(fluid.layers.square_error_cost(fluid.layers.fc(emb, 1), y))
    fluid.optimizer.SGD(0.01).minimize(loss)

dataset = fluid.DatasetFactory().create_dataset("InMemoryDataset")
dataset.set_use_var([ids, y])
dataset.set_batch_size(4)
dataset.set_filelist([path])
dataset.load_into_memory()
loaded = dataset.get_memory_data_size(fleet)
dataset.global_shuffle(fleet)
held = sorted(int(r[0][0]) for r in dataset._memory)
shuffled = dataset.get_shuffle_data_size(fleet)
exe = fluid.Executor(fluid.CPUPlace())
exe.run(start)
exe.train_from_dataset(main, dataset)
fleet.barrier_worker()
with open(os.path.join(outdir, f"rank{rank}.json"), "w") as f:
    json.dump({"held": held, "loaded": loaded, "shuffled": shuffled}, f)
