"""Seed 001, 使用NCCL2通信方式的训练 (lines 1598-1609): the NCCL2 sample, verbatim but for the
import line, run as two trainers under ``mpiexec -n 2`` (oar's collective backend is MPI).

The sample leaves the network, ``use_cuda``, ``loss_name`` and the training loop to
the reader, and says "get actual trainer id here": ``# harness`` lines define them
(the trainer id and endpoint are the MPI rank's). Both trainers must end with the
same parameters after training on different halves of each batch, and learn.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("oar_dist")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dist"))
from mpi_helpers import run_mpi

SAMPLE = """
import os  # harness
import sys  # harness
import numpy as np  # harness
import paddle.fluid as fluid
x = fluid.layers.data(name='x', shape=[13], dtype='float32')  # harness: the network to train
y = fluid.layers.data(name='y', shape=[1], dtype='float32')  # harness
y_predict = fluid.layers.fc(input=x, size=1, act=None)  # harness
avg_cost = fluid.layers.mean(fluid.layers.square_error_cost(input=y_predict, label=y))  # harness
fluid.optimizer.SGD(learning_rate=0.05).minimize(avg_cost)  # harness
loss_name = avg_cost.name  # harness
use_cuda = False  # harness: a CPU job
trainer_id = 0 # get actual trainer id here
trainers = "192.168.1.1:6170,192.168.1.2:6170"
current_endpoint = "192.168.1.1:6170"
trainer_id = int(os.environ["PMI_RANK"])  # harness: the actual trainer id (the MPI rank)
current_endpoint = trainers.split(",")[trainer_id]  # harness
config = fluid.DistributeTranspilerConfig()
config.mode = "nccl2"
t = fluid.DistributeTranspiler(config=config)
t.transpile(trainer_id, trainers=trainers, current_endpoint=current_endpoint)
exe = fluid.ParallelExecutor(use_cuda,
  loss_name=loss_name, num_trainers=len(trainers.split(",")), trainer_id=trainer_id)
...
fluid.Executor(fluid.CPUPlace()).run(fluid.default_startup_program())  # harness
rng = np.random.RandomState(0)  # harness: a 13-feature linear task, half of each batch per trainer
w = rng.uniform(-1, 1, (13, 1)).astype('float32')  # harness
losses = []  # harness
for step in range(200):  # harness
    xb = rng.uniform(-1, 1, (32, 13)).astype('float32')[16 * trainer_id:16 * (trainer_id + 1)]  # harness
    losses.append(float(exe.run(fetch_list=[loss_name], feed={'x': xb, 'y': xb.dot(w)})[0][0]))  # harness
params = np.array(fluid.global_scope().find_var('fc_0.w_0').get_tensor())  # harness
np.savez(os.path.join(sys.argv[1], 'rank%d.npz' % trainer_id), w=params, losses=np.array(losses))  # harness
"""


def port(src: str) -> str:
    return src.replace("import paddle.fluid as fluid", "from oar import fluid")


def test_nccl2_sample_trains_two_trainers_in_step(tmp_path):
    script = tmp_path / "nccl2_sample.py"
    script.write_text(port(SAMPLE))
    run_mpi(script, 2, str(tmp_path), timeout=180)
    r0, r1 = (np.load(tmp_path / f"rank{r}.npz") for r in range(2))
    np.testing.assert_array_equal(r0["w"], r1["w"])
    assert r0["losses"][-1] < 0.01 * r0["losses"][0]
    assert r1["losses"][-1] < 0.01 * r1["losses"][0]
