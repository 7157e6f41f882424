"""Save and load of a ~200 MB parameter set: oar-io against numpy.save / numpy.load.

Ratios are throughput ratios measured in one run (oar / numpy; >= 0.8 is the
target), best of ``--repeat`` runs each, oar and numpy alternating. Two comparisons: without fsync (OAR_IO_FSYNC=0, as numpy.save does
not fsync) and with fsync on both sides (oar's default durability, numpy.save
followed by os.fsync). Run: ``python benchmarks/bench_io_save_load.py``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

import numpy as np


def _param_set(total_mb: int) -> dict:
    """A mix of big matrices and small biases, float32, like a real model's parameters."""
    rng = np.random.default_rng(0)
    out, size, i = {}, 0, 0
    while size < total_mb << 20:
        rows = int(rng.integers(256, 2048))
        out[f"layer_{i}.w_0"] = rng.standard_normal((rows, 1024), dtype=np.float32)
        out[f"layer_{i}.b_0"] = rng.standard_normal(1024, dtype=np.float32)
        size += out[f"layer_{i}.w_0"].nbytes + 4096
        i += 1
    return out


def _np_save(d: str, arrays: dict, fsync: bool) -> None:
    os.makedirs(d, exist_ok=True)
    for name, a in arrays.items():
        with open(os.path.join(d, name + ".npy"), "wb") as f:
            np.save(f, a)
            if fsync:
                f.flush()
                os.fsync(f.fileno())


def _np_load(d: str, arrays: dict) -> dict:
    return {name: np.load(os.path.join(d, name + ".npy")) for name in arrays}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default=None, help="where to write (default: a temp dir)")
    args = ap.parse_args()

    from oar import fluid

    arrays = _param_set(args.mb)
    total = sum(a.nbytes for a in arrays.values()) / 2**20
    prog = fluid.Program()
    blk = prog.global_block()
    vars_ = [
        blk.create_var(name=n, shape=a.shape, dtype="float32", persistable=True)
        for n, a in arrays.items()
    ]
    scope = fluid.Scope()
    for n, a in arrays.items():
        scope.var(n).get_tensor().set(a, None)
    root = tempfile.mkdtemp(dir=args.dir)
    print(f"{len(arrays)} arrays, {total:.0f} MiB, in {root}")

    def paired(a, b) -> tuple:
        """Best-of-N times of ``a`` and ``b``, run alternately so load from other processes hits both."""
        ta, tb = [], []
        for _ in range(args.repeat):
            for fn, acc in ((a, ta), (b, tb)):
                t = time.perf_counter()
                fn()
                acc.append(time.perf_counter() - t)
        return min(ta), min(tb)

    rows = []
    np_dir = os.path.join(root, "np")
    try:
        with fluid.scope_guard(scope):
            for fsync in (False, True):
                os.environ["OAR_IO_FSYNC"] = "1" if fsync else "0"
                tag = "fsync" if fsync else "no fsync"
                for fmt, filename in (
                    ("oar", None),
                    ("oar", "all"),
                    ("fluid", None),
                    ("fluid", "all"),
                ):
                    d = os.path.join(root, f"{fmt}_{filename}")

                    def save(d=d, fmt=fmt, filename=filename):
                        fluid.io.save_vars(None, d, prog, vars=vars_, filename=filename, format=fmt)

                    def load(d=d, filename=filename):
                        with fluid.scope_guard(fluid.Scope()):
                            fluid.io.load_vars(None, d, prog, vars=vars_, filename=filename)

                    t_save, t_np_save = paired(
                        save, lambda fsync=fsync: _np_save(np_dir, arrays, fsync)
                    )
                    t_load, t_np_load = paired(load, lambda: _np_load(np_dir, arrays))
                    layout = "combined" if filename else "per-var"
                    rows.append(
                        (
                            f"{fmt:5s} {layout:8s} {tag:8s}",
                            total / t_save,
                            total / t_np_save,
                            total / t_load,
                            total / t_np_load,
                        )
                    )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(
        f"{'case':28s} {'save MB/s':>10s} {'np.save':>9s} {'ratio':>6s}   {'load MB/s':>10s} {'np.load':>9s} {'ratio':>6s}"
    )
    for case, s, ns, ld, nl in rows:
        print(f"{case:28s} {s:10.0f} {ns:9.0f} {s / ns:6.2f}   {ld:10.0f} {nl:9.0f} {ld / nl:6.2f}")


if __name__ == "__main__":
    main()
