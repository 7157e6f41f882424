"""Distributed embedding tables (``embedding(..., is_sparse=True, is_distributed=True)``) on loopback
pserver jobs: 2 pservers + 2 trainers, time-bounded subprocesses."""

from __future__ import annotations

import json
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
from oar_dist.pserver.hashed import capacity, shard_of
from oar_dist.pserver.row_init import init_rows
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


def _reference(recs, vocab, dim, clip=0.0) -> dict:
    """One process, the trainers' batches together (the average of their gradients)."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        model.build(vocab, dim, "sgd", "array", clip)
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


def _rows_by_id(servers, table="emb") -> dict:
    """id -> final row, from the shards the pservers held (rows in slot order + their maps)."""
    out = {}
    for s in servers:
        for k in s.files:
            if k.startswith(table + ".block") and not k.endswith("@IDS"):
                store = s[k + "@IDS"]
                ids = store[1 : 1 + int(store[0])]
                out.update(zip(ids.tolist(), s[k][: ids.size]))
    return out


def test_distributed_embedding_sync_equals_one_process(tmp_path):
    ckpt = tmp_path / "ckpt"
    recs, servers = _run(tmp_path, OAR_T_VOCAB=50, OAR_T_STEPS=8, OAR_T_SAVE=ckpt)
    ops = list(recs[0]["ops"])
    assert "distributed_lookup_table" in ops and "lookup_table" not in ops
    assert "shard_selected_rows" in ops
    assert not bool(recs[0]["emb_held"]), "the trainer holds the table"
    cap = capacity(50, 2)
    assert [
        s["emb.block0" if "emb.block0" in s.files else "emb.block1"].shape for s in servers
    ] == [
        (cap, 4),
        (cap, 4),
    ]
    rows = _rows_by_id(servers)
    seen = {int(i) for r in recs for k in r.files if k.endswith("/ids") for i in r[k].ravel()}
    assert set(rows) == seen  # a row for every id that arrived, and no other
    table = model.initial_table(50, 4)  # ids never seen keep their initial rows
    for i, row in rows.items():
        table[i] = row
    ref = _reference(recs, 50, 4)
    np.testing.assert_allclose(table, ref["emb"], rtol=1e-5, atol=1e-6)
    assert not np.allclose(table, model.initial_table(50, 4))
    for n, v in ref.items():
        if n != "emb":
            np.testing.assert_array_equal(recs[0]["final/" + n], recs[1]["final/" + n])
            np.testing.assert_allclose(recs[0]["final/" + n], v, rtol=1e-5, atol=1e-6)
    _check_checkpoint(ckpt, recs, servers, table, rows)


def test_clipping_by_global_norm_with_a_distributed_table(tmp_path):
    """GradientClipByGlobalNorm over the dense and the table's sparse gradient, on the trainer:
    one trainer + 2 pservers equal one process clipping the same way."""
    recs, servers = _run(tmp_path, trainers=1, OAR_T_VOCAB=50, OAR_T_STEPS=5, OAR_T_CLIP=0.05)
    assert "scale_selected_rows" in list(recs[0]["ops"])
    table = model.initial_table(50, 4)
    for i, row in _rows_by_id(servers).items():
        table[i] = row
    ref = _reference(recs, 50, 4, clip=0.05)
    np.testing.assert_allclose(table, ref["emb"], rtol=1e-5, atol=1e-6)
    unclipped = _reference(recs, 50, 4)
    assert not np.allclose(unclipped["emb"], ref["emb"], atol=1e-4)  # the clip did act
    for n in ("fc_0.w_0", "fc_0.b_0"):
        np.testing.assert_allclose(recs[0]["final/" + n], ref[n], rtol=1e-5, atol=1e-6)


def test_half_async_merges_steps_and_equals_one_process_on_merged_batches(tmp_path):
    """Half-async (fleet's create_half_async_strategy; here the transpiler's config) with
    CPU_NUM=3: the trainer averages the gradients of 3 steps taken on the same parameters and
    sends them once with a barrier; one process training on each 3 batches together equals it.
    """
    recs, servers = _run(
        tmp_path, trainers=1, OAR_T_VOCAB=50, OAR_T_STEPS=6, OAR_T_HALF=1, CPU_NUM=3
    )
    ops = list(recs[0]["ops"])
    assert "send_barrier" in ops and "fetch_barrier" in ops
    rec = recs[0]
    merged = {k: rec[k] for k in rec.files if k.startswith("init/")}
    merged["losses"] = np.zeros(2)
    for j in range(2):  # one step of the reference per merge
        for k in ("ids", "y"):
            merged[f"feed/{j}/{k}"] = np.concatenate(
                [rec[f"feed/{i}/{k}"] for i in range(3 * j, 3 * j + 3)]
            )
    ref = _reference([merged], 50, 4)
    table = model.initial_table(50, 4)
    for i, row in _rows_by_id(servers).items():
        table[i] = row
    np.testing.assert_allclose(table, ref["emb"], rtol=1e-5, atol=1e-6)
    for n in ("fc_0.w_0", "fc_0.b_0"):
        np.testing.assert_allclose(recs[0]["final/" + n], ref[n], rtol=1e-5, atol=1e-6)
    # the 3 steps of a merge ran on the same parameters: step 1 did not see step 0's update
    every = _reference([recs[0]], 50, 4)
    assert not np.allclose(every["fc_0.w_0"], ref["fc_0.w_0"], atol=1e-5)


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


def _pserver_startups(vocab=50, opt="sgd", init="uniform", ips=IPS):
    """(endpoint, pserver main program, its startup program) of the test job's layout."""
    with fluid.program_guard(fluid.Program(), fluid.Program()), fluid.unique_name.guard():
        model.build(vocab, 4, opt, init)
        t = fluid.DistributeTranspiler()
        eps = ",".join(f"{ip}:6170" for ip in ips)
        t.transpile(1, pservers=eps, trainers=2)
        out = []
        for ip in ips:
            prog = t.get_pserver_program(f"{ip}:6170")
            out.append((f"{ip}:6170", prog, t.get_startup_program(f"{ip}:6170", prog)))
        return out


def _check_checkpoint(ckpt, recs, servers, table, rows):
    """trainer 0's save_persistables wrote the whole job: a single-process program and each
    pserver's startup program load it."""
    main, scope, exe = _local_model()
    with fluid.scope_guard(scope):
        fluid.io.load_persistables(exe, str(ckpt), main)
    np.testing.assert_array_equal(np.array(scope.find_var("emb").get_tensor()), table)
    for n in ("fc_0.w_0", "fc_0.b_0"):
        got = np.array(scope.find_var(n).get_tensor())
        np.testing.assert_array_equal(got, recs[0]["final/" + n])
    for (_, _, start), held in zip(_pserver_startups(), servers):
        pscope = fluid.Scope()
        with fluid.scope_guard(pscope):
            exe.run(start)
            fluid.io.load_persistables(exe, str(ckpt), start)
        for n in held.files:  # rows, id -> slot maps, dense parameters
            np.testing.assert_array_equal(np.array(pscope.find_var(n).get_tensor()), held[n])
        # Fluid's helper for this, from the shards' files: the same
        pscope = fluid.Scope()
        with fluid.scope_guard(pscope):
            exe.run(start)
            fluid.contrib.load_persistables_for_increment(str(ckpt), exe, start, "emb", str(ckpt))
        for n in held.files:
            np.testing.assert_array_equal(np.array(pscope.find_var(n).get_tensor()), held[n])
        # ... or from the whole table's file: every id of the shard's, in id order
        pscope = fluid.Scope()
        with fluid.scope_guard(pscope):
            exe.run(start)
            fluid.contrib.load_persistables_for_increment(
                str(ckpt), exe, start, "emb", str(ckpt / "emb")
            )
        shard = next(n for n in held.files if n.startswith("emb.block") and "@" not in n)
        store = np.array(pscope.find_var(shard + "@IDS").get_tensor())
        ids = store[1 : 1 + int(store[0])]
        k = int(shard[-1])
        np.testing.assert_array_equal(ids, np.flatnonzero(shard_of(np.arange(50), 2) == k))
        got = np.array(pscope.find_var(shard).get_tensor())[: ids.size]
        np.testing.assert_array_equal(got, table[ids])
    _check_inference_load(ckpt, table, rows)


def _check_inference_load(ckpt, table, rows):
    """load_persistables_for_inference puts the table together from the pservers' shards."""
    import shutil

    blocks_only = ckpt.parent / "blocks_only"
    shutil.copytree(ckpt, blocks_only)
    (blocks_only / "emb").unlink()
    main, scope, exe = _local_model()
    with fluid.scope_guard(scope):
        with pytest.raises(Exception, match="emb"):
            fluid.io.load_persistables(exe, str(blocks_only), main)
        fluid.contrib.load_persistables_for_inference(str(blocks_only), exe, main, "emb")
    want = np.zeros_like(table)  # rows of ids no shard holds are zero here
    seen = sorted(rows)
    want[seen] = table[seen]
    np.testing.assert_array_equal(np.array(scope.find_var("emb").get_tensor()), want)
    # the 2 pservers' shards load into a job of 3 pservers: each takes the ids that are its own
    got = {}
    for k, (_, _, start) in enumerate(_pserver_startups(ips=IPS + ("127.0.0.3",))):
        pscope = fluid.Scope()
        with fluid.scope_guard(pscope):
            exe.run(start)
            fluid.contrib.load_persistables_for_increment(
                str(blocks_only), exe, start, "emb", str(blocks_only)
            )
        store = np.array(pscope.find_var(f"emb.block{k}@IDS").get_tensor())
        ids = store[1 : 1 + int(store[0])]
        assert (shard_of(ids, 3) == k).all()
        got.update(zip(ids.tolist(), np.array(pscope.find_var(f"emb.block{k}").get_tensor())))
    assert set(got) == set(rows)
    for i, row in rows.items():
        np.testing.assert_array_equal(got[i], row)


def _hashed_reference(recs, first_rows: dict, steps: int) -> dict:
    """One process: a table of one row per distinct id (through a dict), started from the rows
    the pservers drew, trained on both trainers' batches."""
    pool = [int(i) for i in model.POOL]
    slot = {i: k for k, i in enumerate(pool)}
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        model.build(len(pool), 4, "adam", "uniform")
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    table = np.array(scope.find_var("emb").get_tensor())
    for i, row in first_rows.items():
        table[slot[i]] = row
    scope.find_var("emb").get_tensor().set(table, fluid.CPUPlace())
    for n in ("fc_0.w_0", "fc_0.b_0"):
        scope.find_var(n).get_tensor().set(recs[0]["init/" + n], fluid.CPUPlace())
    for i in range(steps):
        ids = np.concatenate([r[f"feed/{i}/ids"] for r in recs])
        feed = {"ids": np.vectorize(slot.get)(ids).astype("int64")}
        feed["y"] = np.concatenate([r[f"feed/{i}/y"] for r in recs])
        exe.run(main, feed=feed, scope=scope)
    final = np.array(scope.find_var("emb").get_tensor())
    out = {n: np.array(scope.find_var(n).get_tensor()) for n in ("fc_0.w_0", "fc_0.b_0")}
    out["rows"] = {i: final[slot[i]] for i in pool}
    return out


def _initial_rows(ids) -> dict:
    """The rows the pservers draw for ``ids`` (from the table's initializer, per id)."""
    _, prog, _ = _pserver_startups(vocab=30, opt="adam")[0]
    specs = json.loads(prog.global_block().ops[-1].attr("table_specs"))
    rows = init_rows(specs[0]["init"], np.asarray(ids, dtype="int64"), 4, "float32")
    return dict(zip([int(i) for i in ids], rows))


def test_hashed_ids_sync_adam_equal_one_process_and_resume(tmp_path):
    """ids anywhere in int64 (10**12+7, -5, 2**62, -2**63, ...), dict_size 30: 2 pservers +
    2 trainers equal one process that maps the ids through a dict (1e-5). A checkpoint taken
    after step 3 resumes a new job (new processes) that ends where the first one did."""
    common = dict(OAR_T_IDS="hashed", OAR_T_VOCAB=30, OAR_T_OPT="adam", OAR_T_INIT="uniform")
    ckpt = tmp_path / "ckpt"
    first = tmp_path / "first"
    first.mkdir()
    recs, servers = _run(first, OAR_T_STEPS=6, OAR_T_SAVE=ckpt, OAR_T_SAVE_AT=2, **common)
    rows = _rows_by_id(servers)
    assert set(rows) <= {int(i) for i in model.POOL} and len(rows) > 12
    ref = _hashed_reference(recs, _initial_rows(model.POOL), 6)
    for i, row in rows.items():
        np.testing.assert_allclose(row, ref["rows"][i], rtol=1e-5, atol=1e-6)
    for n in ("fc_0.w_0", "fc_0.b_0"):
        np.testing.assert_allclose(recs[0]["final/" + n], ref[n], rtol=1e-5, atol=1e-6)
    # ids outside [0, dict_size): the shards and their maps, no whole-table file
    assert not (ckpt / "emb").exists()
    assert (ckpt / "emb.block0@IDS").exists() and (ckpt / "emb_moment1_0.block1").exists()
    # a trainer program loads the checkpoint without the table (the pservers hold it)
    with fluid.program_guard(fluid.Program(), fluid.Program()), fluid.unique_name.guard():
        model.build(30, 4, "adam", "uniform")
        t = fluid.DistributeTranspiler()
        t.transpile(0, pservers=",".join(f"{ip}:6170" for ip in IPS), trainers=2)
        scope = fluid.Scope()
        with fluid.scope_guard(scope):
            fluid.io.load_persistables(
                fluid.Executor(fluid.CPUPlace()), str(ckpt), t.get_trainer_program()
            )
        assert scope.find_var("emb") is None and scope.find_var("emb_moment1_0") is None
        saved = np.array(scope.find_var("fc_0.w_0").get_tensor())
        assert saved.shape == (4, 1)
    again = tmp_path / "again"
    again.mkdir()
    recs2, servers2 = _run(again, OAR_T_STEPS=3, OAR_T_FIRST=3, OAR_T_LOAD=ckpt, **common)
    for t in range(2):
        np.testing.assert_allclose(recs2[t]["losses"], recs[t]["losses"][3:], rtol=1e-5)
        for n in ("fc_0.w_0", "fc_0.b_0"):
            np.testing.assert_allclose(recs2[t]["final/" + n], recs[t]["final/" + n], rtol=1e-5)
    rows2 = _rows_by_id(servers2)
    assert set(rows2) == set(rows)
    for i, row in rows.items():
        np.testing.assert_allclose(rows2[i], row, rtol=1e-5, atol=1e-6)


def test_more_distinct_ids_than_the_table_holds_fail_the_trainer_clearly(tmp_path):
    """dict_size 2: each of the 2 shards holds 2 rows; the first batch brings more ids."""
    job = seed_job(
        tmp_path,
        trainers=1,
        script=SCRIPT,
        harness=False,
        OAR_T_IDS="hashed",
        OAR_T_VOCAB=2,
        OAR_T_INIT="uniform",
        OAR_T_STEPS=2,
    )
    rcs = job.wait(60)
    assert rcs["trainer0"] != 0
    log = job.log("trainer0")
    assert "distributed table 'emb' is full on pserver 127.0.0." in log, log[-2000:]
    assert "over this shard's capacity of 2" in log and "raise it" in log
    assert all(rcs[f"pserver_{ip}"] != 0 for ip in IPS)  # the trainer left without closing


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
    for s in servers:  # its shard (0.55), not the whole table, nor a float64 copy of its shard
        assert full // 2 <= int(s["peak"]) < 0.8 * full, int(s["peak"]) / full
    assert int(recs[0]["peak"]) < 0.4 * full, int(recs[0]["peak"]) / full  # no block at all
