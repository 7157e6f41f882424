"""Collective training under ``mpiexec -n 2`` (nccl2 and collective transpiler modes):
both ranks end with identical parameters, each saw a disjoint half of the data, and the
parameters equal one process averaging the two halves' gradients (the full-batch mean)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("oar_dist")

from oar import fluid

from .model import build, global_batch
from .mpi_helpers import HERE_DIR, run_mpi

STEPS = 6


def reference(steps: int) -> dict:
    """One process, rank 0's initial values, the whole global batch per step."""
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        main, startup, loss = build(seed=100)
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup)
        for step in range(steps):
            x, y, _ = global_batch(step)
            exe.run(main, feed={"x": x, "y": y}, fetch_list=[loss])
        return {
            p.name: np.array(scope.find_var(p.name).get_tensor()) for p in main.all_parameters()
        }


@pytest.mark.parametrize("mode", ["nccl2-compiled", "nccl2-2places", "nccl2-pe", "collective"])
def test_two_ranks_train_like_one_process(tmp_path, mode):
    run_mpi(HERE_DIR / "mpi_train_script.py", 2, mode, str(tmp_path), str(STEPS), timeout=180)
    ranks = [np.load(tmp_path / f"rank{r}.npz") for r in range(2)]
    want = reference(STEPS)
    names = sorted(want)
    # initial values were broadcast from rank 0 (each rank drew its own)
    for n in names:
        np.testing.assert_array_equal(ranks[0]["init:" + n], ranks[1]["init:" + n])
    # identical parameters, equal to one process on the full batches
    for n in names:
        np.testing.assert_array_equal(ranks[0]["param:" + n], ranks[1]["param:" + n])
        np.testing.assert_allclose(ranks[0]["param:" + n], want[n], rtol=1e-5, atol=1e-6)
    # each rank saw a disjoint half of every batch
    seen = [set(r["seen"].tolist()) for r in ranks]
    assert len(ranks[0]["seen"]) == len(ranks[1]["seen"]) == 8 * STEPS
    for step in range(STEPS):
        _, _, idx = global_batch(step)
        a, b = ranks[0]["seen"][8 * step : 8 * step + 8], ranks[1]["seen"][8 * step : 8 * step + 8]
        assert not set(a) & set(b) and set(a) | set(b) == set(idx.tolist())
    assert seen[0] and seen[1]
