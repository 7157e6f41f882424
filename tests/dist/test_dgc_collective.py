"""DGCMomentumOptimizer across data-parallel places and across 2 MPI processes: each
place sends the top-k of its momentum-corrected gradient (c_allgather of indices and
values), all apply the sum; checked against a hand-computed numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid

pytest.importorskip("oar_dist")

from .dgc_model import batches as make_batches
from .dgc_model import build as _model
from .dgc_model import reference as _reference
from .mpi_helpers import HERE_DIR, run_mpi


def test_dgc_exchanges_top_k_between_places_as_the_reference():
    batches = make_batches()
    main, startup, loss = _model(2, begin=1)
    types = [op.type for op in main.global_block().ops]
    assert types.count("c_allgather") == 2 and "dgc" in types and "dgc_momentum" not in types
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup)
        compiled = fluid.CompiledProgram(main).with_data_parallel(
            loss_name=loss.name, places=fluid.cpu_places(2)
        )
        for x, y in batches:
            exe.run(compiled, feed={"x": x, "y": y}, fetch_list=[loss])
        dp_types = [op.type for op in compiled._runner._program.global_block().ops]
        assert "c_allgather" in dp_types  # only the sparse pieces travel
        assert "c_allreduce_sum" not in dp_types and "c_fused_allreduce_sum" not in dp_types
        got = [np.array(s.find_var("w").get_tensor()) for s in compiled._runner._scopes]
    want = _reference(batches, begin=1)
    for w in got:
        np.testing.assert_allclose(w, want, rtol=1e-5, atol=1e-6)
    # the sparse phase really changed the answer: dense momentum would differ
    assert not np.allclose(want, _reference(batches, begin=10), atol=1e-4)


def test_num_trainers_is_checked():
    with pytest.raises(Exception, match="num_trainers"):
        fluid.optimizer.DGCMomentumOptimizer(0.1, 0.9, 0, num_trainers=0)


@pytest.mark.parametrize(("mode", "places"), [("transpiler", 1), ("transpiler", 2), ("fleet", 1)])
def test_dgc_over_two_mpi_processes_matches_the_reference(tmp_path, mode, places):
    """DGC on 2 ranks under mpiexec, nccl2-transpiled (1 or 2 places each) or through the
    collective fleet: one dense step, then top-k exchange among all 2 * places trainers."""
    script = HERE_DIR / "scripts" / "dgc_train.py"
    run_mpi(script, 2, str(tmp_path), "1", str(places), mode, timeout=120)
    ranks = [np.load(tmp_path / f"rank{r}.npz") for r in range(2)]
    for r in ranks:
        assert int(r["allgathers"]) == 2 and int(r["allreduces"]) == 0
    np.testing.assert_array_equal(ranks[0]["w"], ranks[1]["w"])
    np.testing.assert_allclose(
        ranks[0]["w"], _reference(make_batches(), begin=1, ranks=2 * places), rtol=1e-5, atol=1e-6
    )
    # each rank computed its loss on its own half of the batch
    assert not np.allclose(ranks[0]["losses"], ranks[1]["losses"])


def test_num_trainers_that_miscounts_the_ring_is_named():
    main, startup, loss = _model(3, begin=0)  # 2 places, but num_trainers says 3
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup)
        compiled = fluid.CompiledProgram(main).with_data_parallel(
            loss_name=loss.name, places=fluid.cpu_places(2)
        )
        x, y = make_batches(1)[0]
        with pytest.raises(Exception, match="nranks is 3 but ring 0 has 2 ranks.*num_trainers"):
            exe.run(compiled, feed={"x": x, "y": y}, fetch_list=[loss])
