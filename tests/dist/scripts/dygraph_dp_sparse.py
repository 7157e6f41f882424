"""2-rank DataParallel with a sparse (is_sparse) embedding gradient; rank 0 also has a
parameter without a gradient on rank 1. Writes the trained table per rank.

argv: out_prefix. Run by tests/dist/test_dygraph_data_parallel.py through launch.
"""

import sys

import numpy as np
from oar import fluid


class Net(fluid.dygraph.Layer):
    def __init__(self):
        super().__init__()
        self.emb = fluid.dygraph.Embedding([10, 3], is_sparse=True)
        self.head = fluid.dygraph.Linear(3, 1)

    def forward(self, ids, use_head):
        h = fluid.layers.reduce_sum(self.emb(ids), dim=1)
        return self.head(h) if use_head else fluid.layers.reduce_sum(h, dim=1, keep_dim=True)


env = fluid.dygraph.ParallelEnv()
IDS = [np.array([[1, 2], [2, 7]], "int64"), np.array([[2, 5], [9, 9]], "int64")]
with fluid.dygraph.guard(fluid.CPUPlace()):
    model = fluid.dygraph.DataParallel(Net(), fluid.dygraph.prepare_context())
    opt = fluid.optimizer.SGD(learning_rate=0.5, parameter_list=model.parameters())
    w0 = model.state_dict()["emb.weight"].numpy()
    head0 = model.state_dict()["head.weight"].numpy()
    ids = fluid.dygraph.to_variable(IDS[env.local_rank])
    out = model(ids, use_head=env.local_rank == 0)  # rank 1 leaves the head without a gradient
    loss = model.scale_loss(fluid.layers.reduce_sum(out))
    loss.backward()
    model.apply_collective_grads()
    opt.minimize(loss)
    state = model.state_dict()
    np.savez(
        f"{sys.argv[1]}.{env.local_rank}.npz",
        w0=w0,
        head0=head0,
        w=state["emb.weight"].numpy(),
        head=state["head.weight"].numpy(),
    )
