"""Distributed embedding table benchmark: rows/s pulled (``prefetch``) and pushed (SelectedRows
gradients applied by sparse SGD) for a hashed table of ``--rows`` distinct ids (its dict_size) x
``--dim`` float32, held by 1 and by 2 pservers (each in its own process on loopback), ``--batch``
distinct ids per step.

    python benchmarks/bench_pserver_table.py [--rows 1000000] [--dim 64] [--batch 1000]
        [--steps 200] [--fill 500000]

Two kinds of ids: ``range`` (ids in ``[0, rows)``, the workload of the earlier dense row blocks)
and ``int64`` (random ids anywhere in int64). Before timing, the trainer fills the tables with
``--fill`` ids (so the id -> slot maps are half full, as in a trained table); ``pull`` and
``push`` then touch ids already held, ``grow`` pulls ``--batch`` new ids per step (a slot and a
row drawn per id). The trainer runs oar's ops (``distributed_lookup_table``;
``distributed_lookup_table_grad`` + ``shard_selected_rows`` + ``send``) in an Executor, async
mode. In the same run: the numpy floor (one in-process gather ``table[ids]`` and one sparse
update ``np.subtract.at`` of the same rows) and a raw pyzmq round trip of the same bytes (ids
out, rows back) on loopback. Not in tests (timings).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time

import numpy as np

HERE = os.path.abspath(__file__)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _names(n: int) -> list:
    return [f"emb.block{i}" for i in range(n)]


def _grad(name: str) -> str:
    """The gradient name of a table shard (``emb.block1`` -> ``emb@GRAD.block1``)."""
    base, dot, rest = name.partition(".")
    return f"{base}@GRAD{dot}{rest}"


def _update_program(name: str, cap: int, dim: int) -> dict:
    from oar import fluid

    prog = fluid.Program()
    b = prog.global_block()
    b.create_var(name=name, shape=[cap, dim], dtype="float32", persistable=True)
    b.create_var(name=_grad(name), shape=[cap, dim], dtype="float32", type="selected_rows")
    b.create_var(name="lr", shape=[1], dtype="float32", persistable=True)
    b.append_op(
        "sgd",
        {"Param": [name], "Grad": [_grad(name)], "LearningRate": ["lr"]},
        {"ParamOut": [name]},
    )
    return prog.to_dict()


def run_pserver(ep: str, shard: int, shards: int, rows: int, dim: int) -> None:
    from oar_dist.pserver.hashed import capacity, ids_name
    from oar_dist.pserver.row_init import spec
    from oar_dist.pserver.server import serve

    name = _names(shards)[shard]
    cap = capacity(rows, shards)
    init = spec("uniform_random", {"min": -0.1, "max": 0.1, "seed": 1}, "emb")
    table = {"name": name, "grad": _grad(name), "ids": ids_name(name), "capacity": cap}
    table.update(shard=shard, shards=shards, table="emb", init=init)
    attrs = {
        "endpoint": ep,
        "Fanin": 1,
        "sync_mode": False,
        "distributed_mode": 1,
        "var_names": [name, "lr", ids_name(name)],
        "grad_to_block_id": [_grad(name) + ":0"],
        "optimize_programs": json.dumps([_update_program(name, cap, dim)]),
        "lr_program": "",
        "tables": [name],
        "table_specs": json.dumps([table]),
    }
    rows_ = np.full((cap, dim), 0.01, dtype="float32")  # touched: resident, as a trained table
    serve([rows_, np.full(1, 1e-3, "float32"), np.zeros(cap + 1, "int64")], attrs)


def _programs(eps: list, rows: int, dim: int):
    from oar import fluid

    names = _names(len(eps))
    table = {"table_names": names, "endpoints": eps, "height": rows, "emb_dim": dim}
    pull, push = fluid.Program(), fluid.Program()
    for prog in (pull, push):
        b = prog.global_block()
        b.create_var(name="ids", shape=[-1, 1], dtype="int64")
        b.create_var(name="out", shape=[-1, dim], dtype="float32")
    pull.global_block().append_op(
        "distributed_lookup_table", {"Ids": ["ids"]}, {"Out": ["out"]}, table
    )
    b = push.global_block()
    b.create_var(name="emb@GRAD", shape=[rows, dim], dtype="float32", type="selected_rows")
    b.append_op(
        "distributed_lookup_table_grad",
        {"Ids": ["ids"], "Out@GRAD": ["out"]},
        {"W@GRAD": ["emb@GRAD"]},
        {"height": rows},
    )
    grads = [_grad(n) for n in names]
    for g in grads:
        b.create_var(name=g, shape=[-1, dim], dtype="float32", type="selected_rows")
    b.append_op("shard_selected_rows", {"X": ["emb@GRAD"]}, {"Out": grads}, {"shards": len(eps)})
    b.append_op(
        "send", {"X": grads}, {}, {"epmap": eps, "send_varnames": grads, "sync_mode": False}
    )
    return pull, push


def _ids(kind: str, rng, n: int, rows: int) -> np.ndarray:
    """``n`` distinct ids: in ``[0, rows)`` or anywhere in int64."""
    if kind == "range":
        return rng.choice(rows, n, replace=False).astype("int64")
    return np.unique(rng.integers(-(2**63), 2**63 - 1, n + 64, dtype="int64"))[:n]


def run_trainer(eps: list, rows: int, dim: int, batch: int, steps: int, a) -> dict:
    from oar import fluid
    from oar_dist.pserver.client import get_client

    pull, push = _programs(eps, rows, dim)
    exe = fluid.Executor(fluid.CPUPlace())
    rng = np.random.default_rng(0)
    need = a.fill + batch * (steps + 1)
    if need > rows:
        raise SystemExit(f"--fill + --batch x (--steps + 1) = {need} ids, over --rows {rows}")
    pool = _ids(a.kind, rng, need, rows)
    held, fresh = pool[: a.fill], pool[a.fill :]
    for at in range(0, held.size, 50_000):  # fill the maps (ids and rows drawn)
        exe.run(pull, feed={"ids": held[at : at + 50_000].reshape(-1, 1)})
    batches = [rng.choice(held, batch, replace=False).reshape(-1, 1) for _ in range(8)]
    grad = np.full((batch, dim), 1e-3, "float32")
    exe.run(pull, feed={"ids": batches[0]})  # warm up (compiled kernels too)
    exe.run(push, feed={"ids": batches[0], "out": grad})
    for ep in eps:
        get_client(ep, 0).drain()
    t0 = time.perf_counter()
    for i in range(steps):
        exe.run(pull, feed={"ids": batches[i % 8]}, fetch_list=["out"])
    t_pull = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(steps):
        exe.run(push, feed={"ids": batches[i % 8], "out": grad})
    for ep in eps:
        get_client(ep, 0).drain()  # every push applied (acknowledged)
    t_push = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i in range(steps):
        ids = fresh[i * batch : (i + 1) * batch].reshape(-1, 1)
        exe.run(pull, feed={"ids": ids}, fetch_list=["out"])
    t_grow = time.perf_counter() - t0
    exe.close()
    n = batch * steps
    return {"pull": n / t_pull, "push": n / t_push, "grow": n / t_grow}


def numpy_floor(rows: int, dim: int, batch: int, steps: int) -> dict:
    table = np.full((rows, dim), 0.01, dtype="float32")
    rng = np.random.default_rng(0)
    ids = rng.choice(rows, batch, replace=False)
    grad = np.full((batch, dim), 1e-3, "float32")
    t0 = time.perf_counter()
    for _ in range(steps):
        table[ids]
    t_pull = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(steps):
        np.subtract.at(table, ids, np.float32(1e-3) * grad)
    t_push = time.perf_counter() - t0
    return {"pull": batch * steps / t_pull, "push": batch * steps / t_push}


def raw_zmq(dim: int, batch: int, steps: int) -> float:
    """Rows/s of a raw pyzmq round trip: batch int64 ids out, batch x dim float32 rows back."""
    import zmq

    port = _port()
    echo = _spawn("echo", port, steps + 1, batch * dim * 4)
    s = zmq.Context.instance().socket(zmq.DEALER)
    s.connect(f"tcp://127.0.0.1:{port}")
    ids = np.arange(batch, dtype="int64")
    s.send(ids, copy=False)
    s.recv(copy=False)
    t0 = time.perf_counter()
    for _ in range(steps):
        s.send(ids, copy=False)
        np.frombuffer(s.recv(copy=False), dtype="float32").copy()
    dt = time.perf_counter() - t0
    s.close(linger=0)
    echo.wait(60)
    return batch * steps / dt


def raw_echo(port: int, rounds: int, nbytes: int) -> None:
    import zmq

    s = zmq.Context.instance().socket(zmq.ROUTER)
    s.bind(f"tcp://127.0.0.1:{port}")
    reply = np.zeros(nbytes, dtype=np.uint8)
    for _ in range(rounds):
        ident, _frame = s.recv_multipart(copy=False)
        s.send_multipart([ident, reply], copy=False)
    s.close(linger=1000)


def _spawn(*args) -> subprocess.Popen:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return subprocess.Popen(
        [sys.executable, HERE, *map(str, args)], env=env, stdout=subprocess.PIPE, text=True
    )


def distributed(n: int, a) -> dict:
    port_eps = [f"127.0.0.1:{_port()}" for _ in range(n)]
    servers = [_spawn("pserver", ep, k, n, a.rows, a.dim) for k, ep in enumerate(port_eps)]
    args = (a.rows, a.dim, a.batch, a.steps, a.fill, a.kind)
    tr = _spawn("trainer", ",".join(port_eps), *args)
    out, _ = tr.communicate(timeout=900)
    for s in servers:
        s.wait(120)
    return json.loads(out.strip().splitlines()[-1])


def _child(argv: list) -> None:
    kind = argv[0]
    if kind == "pserver":
        run_pserver(argv[1], int(argv[2]), int(argv[3]), int(argv[4]), int(argv[5]))
    elif kind == "trainer":
        a = argparse.Namespace(fill=int(argv[6]), kind=argv[7])
        r = run_trainer(
            argv[1].split(","), int(argv[2]), int(argv[3]), int(argv[4]), int(argv[5]), a
        )
        print(json.dumps(r))
    elif kind == "echo":
        raw_echo(int(argv[1]), int(argv[2]), int(argv[3]))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("pserver", "trainer", "echo"):
        _child(sys.argv[1:])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--fill", type=int, default=500_000)
    a = ap.parse_args()
    floor = numpy_floor(a.rows, a.dim, a.batch, a.steps)
    raw = raw_zmq(a.dim, a.batch, a.steps)
    print(
        f"hashed table of {a.rows} ids x {a.dim} float32, {a.fill} ids held before timing, "
        f"{a.batch} distinct ids per step, {a.steps} steps, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    print(
        f"numpy floor (in process): pull {floor['pull']:.3g} rows/s, push {floor['push']:.3g} rows/s"
    )
    print(f"raw pyzmq round trip (ids out, rows back): {raw:.3g} rows/s")
    for kind in ("range", "int64"):
        for n in (1, 2):
            a.kind = kind
            r = distributed(n, a)
            print(
                f"ids {kind:5s} {n} pserver{'s' if n > 1 else ' '}: pull {r['pull']:.3g} rows/s "
                f"({r['pull'] / raw:.2f} x raw pyzmq), push {r['push']:.3g} rows/s "
                f"({r['push'] / floor['push']:.2f} x numpy floor), grow (new ids) "
                f"{r['grow']:.3g} rows/s"
            )


if __name__ == "__main__":
    main()
