"""The small model and data of the MPI training tests (shared by the ranks and the reference)."""

from __future__ import annotations

import numpy as np
from oar import fluid

GLOBAL_BATCH = 16
N_ROWS = 64


def build(seed: int):
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = seed
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", [8])
        y = fluid.layers.data("y", [1])
        h = fluid.layers.fc(x, 16, act="relu")
        pred = fluid.layers.fc(h, 1)
        loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, y))
        fluid.optimizer.Momentum(0.05, 0.9).minimize(loss)
    return main, startup, loss


def global_batch(step: int):
    """Rows of a fixed data set for ``step``, shuffled per step; returns (x, y, row indices)."""
    rng = np.random.RandomState(0)
    X = rng.rand(N_ROWS, 8).astype("float32")
    Y = (X.sum(1, keepdims=True) * 0.3).astype("float32")
    idx = np.random.RandomState(step).permutation(N_ROWS)[:GLOBAL_BATCH]
    return X[idx], Y[idx], idx


def transpile_collective(
    main, startup, rank: int, size: int, mode: str = "nccl2", port: int = 6170
):
    """Transpile ``main``/``startup`` for rank ``rank`` of ``size`` local trainers in ``mode``
    ("nccl2", or "collective" with grad_allreduce)."""
    endpoints = [f"127.0.0.1:{port + i}" for i in range(size)]
    config = fluid.DistributeTranspilerConfig()
    config.mode = mode
    if mode == "collective":
        config.collective_mode = "grad_allreduce"
    fluid.DistributeTranspiler(config=config).transpile(
        rank,
        program=main,
        trainers=",".join(endpoints),
        current_endpoint=endpoints[rank],
        startup_program=startup,
    )
