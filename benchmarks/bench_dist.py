"""oar-dist throughput, as ratios measured in one run (the data-parallel and collective targets of docs/dist.md).

1. allreduce of the MLP 784-512-512-10's gradients (2.7 MB of float32) between 2 MPI
   ranks: oar's MPI backend, bucketed (one message) and per tensor, against raw mpi4py
   ``Allreduce`` of the same bytes (target: bucketed >= 0.8 x raw bandwidth);
2. CPU data parallel, the same MLP, batch 256, SGD: 2 places x 1 BLAS thread against
   1 place x 1 BLAS thread (target >= 1.6 x throughput on 2 cores), and 1 place x 2
   BLAS threads;
3. a 2-process MPI training step (nccl2 transpiler, 128 rows per rank) against one
   process on the whole batch: the scaling efficiency (throughput ratio / 2).

Each configuration runs in its own process (BLAS threads are fixed at start-up),
configurations alternate ``--repeat`` times and the best window of each counts, so
the ratios share the machine's load. Run: ``python benchmarks/bench_dist.py``
(``--quick`` for a smoke run; ``--clock cpu`` measures process CPU time instead of
wall time: then 2 places show their overhead, not their speedup).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
SIZES = (784, 512, 512, 10)
BATCH = 256
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def mpiexec() -> str | None:
    local = Path(sys.executable).parent / "mpiexec"
    return str(local) if local.exists() else shutil.which("mpiexec")


def _env(blas_threads: int) -> dict:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(blas_threads)
    return env


def _result(out: str) -> dict:
    lines = [ln for ln in out.splitlines() if ln.startswith("RESULT ")]
    if not lines:
        raise RuntimeError(f"no RESULT line in the worker's output:\n{out[-3000:]}")
    return json.loads(lines[0][7:])


# --- workers (run in their own processes) ------------------------------------------------------
def build_mlp(fluid, seed: int = 1):
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = seed
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", [SIZES[0]])
        label = fluid.layers.data("label", [1], dtype="int64")
        h = x
        for i, size in enumerate(SIZES[1:]):
            h = fluid.layers.fc(h, size, act="softmax" if i == len(SIZES) - 2 else "relu")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(h, label))
        fluid.optimizer.SGD(0.01).minimize(loss)
    return main, startup, loss


def data(rows: int, offset: int = 0):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SIZES[0]), dtype=np.float32)
    y = rng.integers(0, SIZES[-1], (BATCH, 1)).astype(np.int64)
    return x[offset : offset + rows], y[offset : offset + rows]


def worker_train(args) -> None:
    from oar import fluid

    clock = CLOCKS[args.clock]
    rank = int(os.environ.get("PMI_RANK", "0"))
    size = int(os.environ.get("PMI_SIZE", "1"))
    main, startup, loss = build_mlp(fluid)
    if size > 1:
        eps = ",".join(f"127.0.0.1:{6170 + i}" for i in range(size))
        cfg = fluid.DistributeTranspilerConfig()
        cfg.mode = "nccl2"
        fluid.DistributeTranspiler(cfg).transpile(
            rank,
            program=main,
            trainers=eps,
            current_endpoint=eps.split(",")[rank],
            startup_program=startup,
        )
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    prog = main
    if args.places > 1 or size > 1:
        bs = fluid.BuildStrategy()
        bs.num_trainers, bs.trainer_id = size, rank
        prog = fluid.CompiledProgram(main).with_data_parallel(
            loss_name=loss.name, build_strategy=bs, places=fluid.cpu_places(args.places)
        )
    rows = BATCH // size
    x, y = data(rows, rank * rows)
    feed = {"x": x, "label": y}
    first = float(np.mean(exe.run(prog, feed=feed, fetch_list=[loss])[0]))
    if size > 1:  # the whole batch's mean loss: the mean over the ranks' halves
        from mpi4py import MPI

        first = MPI.COMM_WORLD.allreduce(first) / size
    for _ in range(2):
        exe.run(prog, feed=feed, fetch_list=[loss])
    best = float("inf")
    for _ in range(args.windows):
        t0 = clock()
        for _ in range(args.steps):
            exe.run(prog, feed=feed, fetch_list=[loss])
        best = min(best, (clock() - t0) / args.steps)
    if rank == 0:
        print("RESULT " + json.dumps({"step_s": best, "first_loss": first}), flush=True)


def worker_allreduce(args) -> None:
    from mpi4py import MPI
    from oar_dist.collective.mpi import MPIBackend

    comm = MPI.COMM_WORLD
    backend = MPIBackend()
    rng = np.random.default_rng(comm.Get_rank())
    shapes = []
    for a, b in zip(SIZES[:-1], SIZES[1:]):
        shapes += [(a, b), (b,)]
    grads = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
    flat = np.concatenate([g.ravel() for g in grads])
    out = np.empty_like(flat)

    def raw():
        comm.Allreduce(flat, out, op=MPI.SUM)

    def raw_per_tensor():
        for g in grads:
            comm.Allreduce(g, np.empty_like(g), op=MPI.SUM)

    def bucketed():
        backend.allreduce_many(grads)

    def per_tensor():
        for g in grads:
            backend.allreduce(g)

    cases = {
        "raw": raw,
        "raw_per_tensor": raw_per_tensor,
        "bucketed": bucketed,
        "per_tensor": per_tensor,
    }
    red = backend.allreduce_many(grads)
    want = comm.allreduce(float(sum(g.sum() for g in grads)))
    assert abs(float(sum(r.sum() for r in red)) - want) < 1e-2 * max(1.0, abs(want))
    times = {k: float("inf") for k in cases}
    for _ in range(args.windows):
        for name, fn in cases.items():
            comm.Barrier()
            t0 = time.perf_counter()
            for _ in range(args.steps):
                fn()
            dt = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX) / args.steps
            times[name] = min(times[name], dt)
    if comm.Get_rank() == 0:
        print("RESULT " + json.dumps({"bytes": int(flat.nbytes), **times}), flush=True)


# --- the driver ----------------------------------------------------------------------------
def run_config(name: str, args, timeout: float) -> dict:
    common = ["--steps", str(args.steps), "--windows", str(args.windows), "--clock", args.clock]
    me = [sys.executable, str(HERE)]
    if name == "1x1":
        cmd, env = me + ["--worker", "train", "--places", "1"] + common, _env(1)
    elif name == "2x1":
        cmd, env = me + ["--worker", "train", "--places", "2"] + common, _env(1)
    elif name == "1x2":
        cmd, env = me + ["--worker", "train", "--places", "1"] + common, _env(2)
    elif name == "mpi2":
        cmd = [mpiexec(), "-n", "2"] + me + ["--worker", "train", "--places", "1"] + common
        env = _env(1)
    else:
        raise ValueError(name)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"{name} failed:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return _result(r.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", choices=["train", "allreduce"])
    ap.add_argument("--places", type=int, default=1)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--windows", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    ap.add_argument("--quick", action="store_true", help="a smoke run: few steps, one repeat")
    args = ap.parse_args()
    if args.worker == "train":
        return worker_train(args)
    if args.worker == "allreduce":
        return worker_allreduce(args)
    if args.quick:
        args.steps, args.windows, args.repeat = 2, 1, 1
    exe = mpiexec()

    print("== allreduce of the MLP's gradients, 2 MPI ranks")
    if exe is None:
        print("  skipped: no mpiexec (pip install mpi4py mpich)")
    else:
        cmd = [
            exe,
            "-n",
            "2",
            sys.executable,
            str(HERE),
            "--worker",
            "allreduce",
            "--steps",
            str(20 * args.steps),
            "--windows",
            str(args.windows),
        ]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=_env(1))
        if r.returncode != 0:
            raise RuntimeError(r.stdout[-2000:] + r.stderr[-2000:])
        a = _result(r.stdout)
        mb = a["bytes"] / 2**20
        for k in ("raw", "bucketed", "per_tensor", "raw_per_tensor"):
            print(f"  {k:15s} {a[k] * 1e6:9.1f} us   {mb / a[k] / 1024:6.2f} GiB/s")
        print(f"  bucketed / raw bandwidth: {a['raw'] / a['bucketed']:.2f} (target >= 0.8)")
        print(f"  bucketed vs per-tensor:   {a['per_tensor'] / a['bucketed']:.2f}x faster")

    print(f"== data parallel MLP 784-512-512-10, batch {BATCH}, SGD ({args.clock} clock)")
    configs = ["1x1", "2x1", "1x2"] + (["mpi2"] if exe else [])
    best: dict = {}
    firsts: dict = {}
    for _ in range(args.repeat):
        for name in configs:  # alternate, so every configuration sees the same load
            res = run_config(name, args, timeout=300)
            best[name] = min(best.get(name, float("inf")), res["step_s"])
            firsts[name] = res["first_loss"]
    ref = firsts["1x1"]
    for name, v in firsts.items():  # the same first-step loss (the mean over places / ranks)
        if abs(v - ref) > 1e-4 * max(1.0, abs(ref)):
            raise AssertionError(f"first-step loss of {name} is {v}, of 1x1 {ref}")
    labels = {
        "1x1": "1 place x 1 BLAS thread",
        "2x1": "2 places x 1 BLAS thread",
        "1x2": "1 place x 2 BLAS threads",
        "mpi2": "2 MPI processes x 1 thread",
    }
    for name in configs:
        print(
            f"  {labels[name]:28s} {best[name] * 1e3:8.2f} ms/step  "
            f"{BATCH / best[name]:8.0f} samples/s  x{best['1x1'] / best[name]:.2f}"
        )
    print(f"  2 places / 1 place throughput: {best['1x1'] / best['2x1']:.2f} (target >= 1.6)")
    print(f"  1 place x 2 threads / 1 x 1:   {best['1x1'] / best['1x2']:.2f}")
    if "mpi2" in best:
        print(f"  2-process scaling efficiency:  {best['1x1'] / best['mpi2'] / 2:.2f}")


if __name__ == "__main__":
    main()
