"""Runs a pserver-job script (the seed's dist_train.py, or a test script) and records what it did.

Environment (besides the script's own ``PADDLE_*`` variables):
``OAR_HARNESS_OUT`` (directory for ``<role><id>.npz``), ``OAR_HARNESS_ROWS`` (rows of the
synthetic ``uci_housing`` set that replaces the download), ``OAR_HARNESS_KILL_AT``
(SIGKILL this trainer at that step). The shuffle is seeded per trainer, the feeds of
every training step and the parameters after the startup program and at ``exe.close()``
are saved, so a test can replay the job in one process.
"""

from __future__ import annotations

import os
import random
import runpy
import sys

import numpy as np
import oar
from oar import fluid

script = sys.argv[1]
out = os.environ["OAR_HARNESS_OUT"]
role = os.environ.get("PADDLE_TRAINING_ROLE", "TRAINER")
tid = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
who = f"{role.lower()}{tid if role == 'TRAINER' else os.environ.get('PADDLE_CURRENT_IP', '')}"
rows = int(os.environ.get("OAR_HARNESS_ROWS", "80"))
kill_at = int(os.environ.get("OAR_HARNESS_KILL_AT", "-1"))

rng = np.random.RandomState(7)
table = rng.uniform(-1, 1, (rows, 13))
target = table.dot(rng.uniform(-1, 1, (13, 1))) + 3.0


def _uci_train():
    def reader():
        for i in range(rows):
            yield table[i], target[i]

    return reader


oar.dataset.uci_housing.train = _uci_train
random.seed(100 + tid)

record: dict = {"feeds": [], "losses": []}
_run = fluid.Executor.run
_close = fluid.Executor.close


def _params() -> dict:
    prog = fluid.default_main_program()
    out = {}
    for p in prog.global_block().all_parameters():
        v = fluid.global_scope().find_var(p.name)
        if v is not None and v.is_initialized():
            out[p.name] = np.array(v.get_tensor())
    return out


def run(self, program=None, feed=None, fetch_list=None, *args, **kwargs):
    res = _run(self, program, feed, fetch_list, *args, **kwargs)
    if program is fluid.default_startup_program() and role == "TRAINER":
        record["init"] = _params()
    elif feed:
        record["feeds"].append({k: np.array(v) for k, v in feed.items()})
        if fetch_list:
            record["losses"].append(float(np.asarray(res[0]).ravel()[0]))
        if len(record["feeds"]) == kill_at:
            os.kill(os.getpid(), 9)
    return res


def close(self):
    record["final"] = _params()
    return _close(self)


fluid.Executor.run = run
fluid.Executor.close = close
runpy.run_path(script, run_name="__main__")
if role == "TRAINER":
    arrays = {"losses": np.array(record["losses"])}
    for k, v in record.get("init", {}).items():
        arrays["init/" + k] = v
    for k, v in record.get("final", {}).items():
        arrays["final/" + k] = v
    for i, f in enumerate(record["feeds"]):
        for k, v in f.items():
            arrays[f"feed/{i}/{k}"] = v
    np.savez(os.path.join(out, who + ".npz"), **arrays)
