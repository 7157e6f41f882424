"""Distributed embedding tables (``embedding(..., is_sparse=True, is_distributed=True)``) on loopback
pserver jobs: 2 pservers + 2 trainers, time-bounded subprocesses."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("zmq")
pytest.importorskip("oar_dist")

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "scripts"))
import pserver_embedding as model
from oar import fluid
from pserver_helpers import HERE, seed_job

SCRIPT = HERE / "scripts" / "pserver_embedding.py"
IPS = ("127.0.0.1", "127.0.0.2")


def _run(tmp_path, trainers=2, timeout=90, **env):
    job = seed_job(tmp_path, trainers=trainers, script=SCRIPT, harness=False, **env)
    rcs = job.wait(timeout)
    assert all(rc == 0 for rc in rcs.values()), job.logs()
    recs = [np.load(tmp_path / f"trainer{t}.npz") for t in range(trainers)]
    servers = [np.load(tmp_path / f"pserver_{ip}.npz") for ip in IPS]
    return recs, servers


def _reference(recs, vocab, dim) -> dict:
    """One process, the trainers' batches together (the average of their gradients)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        model.build(vocab, dim, "sgd", "array")
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    names = [p.name for p in main.global_block().all_parameters()]
    for n in names:
        if n != "emb":
            scope.find_var(n).get_tensor().set(recs[0]["init/" + n], fluid.CPUPlace())
    for i in range(len(recs[0]["losses"])):
        feed = {k: np.concatenate([r[f"feed/{i}/{k}"] for r in recs]) for k in ("ids", "y")}
        exe.run(main, feed=feed, scope=scope)
    return {n: np.array(scope.find_var(n).get_tensor()) for n in names}


def test_distributed_embedding_sync_equals_one_process(tmp_path):
    ckpt = tmp_path / "ckpt"
    recs, servers = _run(tmp_path, OAR_T_VOCAB=50, OAR_T_STEPS=8, OAR_T_SAVE=ckpt)
    ops = list(recs[0]["ops"])
    assert "distributed_lookup_table" in ops and "lookup_table" not in ops
    assert "split_selected_rows" in ops
    assert not bool(recs[0]["emb_held"]), "the trainer holds the table"
    blocks = [s["emb.block0"] if "emb.block0" in s.files else s["emb.block1"] for s in servers]
    assert [b.shape for b in blocks] == [(25, 4), (25, 4)]
    ref = _reference(recs, 50, 4)
    np.testing.assert_allclose(np.concatenate(blocks), ref["emb"], rtol=1e-5, atol=1e-6)
    assert not np.allclose(np.concatenate(blocks), model.initial_table(50, 4))
    for n, v in ref.items():
        if n != "emb":
            np.testing.assert_array_equal(recs[0]["final/" + n], recs[1]["final/" + n])
            np.testing.assert_allclose(recs[0]["final/" + n], v, rtol=1e-5, atol=1e-6)
    _check_checkpoint(ckpt, recs, servers, np.concatenate(blocks))


def _local_model() -> tuple:
    """The model in one process, initialised in a scope of its own."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        model.build(50, 4, "sgd", "uniform")
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        exe.run(startup)
    return main, scope, exe


def _check_checkpoint(ckpt, recs, servers, table):
    """trainer 0's save_persistables wrote the whole job: a single-process program and each
    pserver's startup program load it."""
    main, scope, exe = _local_model()
    with fluid.scope_guard(scope):
        fluid.io.load_persistables(exe, str(ckpt), main)
    np.testing.assert_array_equal(np.array(scope.find_var("emb").get_tensor()), table)
    for n in ("fc_0.w_0", "fc_0.b_0"):
        got = np.array(scope.find_var(n).get_tensor())
        np.testing.assert_array_equal(got, recs[0]["final/" + n])
    with fluid.program_guard(fluid.Program(), fluid.Program()), fluid.unique_name.guard():
        model.build(50, 4, "sgd", "uniform")
        t = fluid.DistributeTranspiler()
        eps = ",".join(f"{ip}:6170" for ip in IPS)
        t.transpile(1, pservers=eps, trainers=2)
        for ip, held in zip(IPS, servers):
            start = t.get_startup_program(f"{ip}:6170", t.get_pserver_program(f"{ip}:6170"))
            pscope = fluid.Scope()
            with fluid.scope_guard(pscope):
                exe.run(start)
                fluid.io.load_persistables(exe, str(ckpt), start)
            for n in held.files:
                np.testing.assert_array_equal(np.array(pscope.find_var(n).get_tensor()), held[n])
            # Fluid's helper for this: the pserver's dense variables, its rows of the whole table
            pscope = fluid.Scope()
            with fluid.scope_guard(pscope):
                exe.run(start)
                fluid.contrib.load_persistables_for_increment(
                    str(ckpt), exe, start, "emb", str(ckpt / "emb")
                )
            for n in held.files:
                np.testing.assert_array_equal(np.array(pscope.find_var(n).get_tensor()), held[n])
    _check_inference_load(ckpt, table)


def _check_inference_load(ckpt, table):
    """load_persistables_for_inference puts the table together from the pservers' blocks."""
    import shutil

    blocks_only = ckpt.parent / "blocks_only"
    shutil.copytree(ckpt, blocks_only)
    (blocks_only / "emb").unlink()
    main, scope, exe = _local_model()
    with fluid.scope_guard(scope):
        with pytest.raises(Exception, match="emb"):
            fluid.io.load_persistables(exe, str(blocks_only), main)
        fluid.contrib.load_persistables_for_inference(str(blocks_only), exe, main, "emb")
    np.testing.assert_array_equal(np.array(scope.find_var("emb").get_tensor()), table)


def test_distributed_embedding_async_adam_losses_fall(tmp_path):
    recs, servers = _run(
        tmp_path, OAR_T_SYNC=0, OAR_T_OPT="adam", OAR_T_INIT="uniform", OAR_T_STEPS=40
    )
    for r in recs:
        losses = r["losses"]
        assert losses[-10:].mean() < 0.5 * losses[:5].mean(), losses
    moments = [n for s in servers for n in s.files if n.startswith("emb_moment1")]
    assert len(moments) == 2, [s.files for s in servers]


def test_no_process_holds_the_whole_table(tmp_path):
    """A 64000 x 64 float32 table (16.4 MB): each process's tracemalloc peak after building
        the model stays below the table's size (the pservers hold half each; the trainer none; the
    trainer's few MB are the kernels and plans it loads)."""
    recs, servers = _run(
        tmp_path,
        trainers=1,
        OAR_T_VOCAB=64000,
        OAR_T_DIM=64,
        OAR_T_INIT="uniform",
        OAR_T_STEPS=2,
        OAR_T_TRACE=1,
        # the numba plugin's lazy compile would dominate the allocations measured
        OAR_DISABLE_PLUGINS="kernels_numba",
    )
    full = 64000 * 64 * 4
    for s in servers:  # its half, not the whole table, nor a float64 copy of its half
        assert full // 2 <= int(s["peak"]) < 0.8 * full, int(s["peak"]) / full
    assert int(recs[0]["peak"]) < 0.4 * full, int(recs[0]["peak"]) / full  # no block at all
