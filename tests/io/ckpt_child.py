"""Child process for the checkpoint atomicity tests (run as a script, bounded by the caller).

``kill MODE TRIALS SEED``: imports oar once, then per trial forks a saver that
saves checkpoints k, k+1, ... (every value of save k equals k) in a loop,
SIGKILLs it at a random instant, loads the checkpoint and prints one JSON line
per trial: the last save the saver finished, the value loaded, and whether all
loaded values came from one save.

``write MODE SECONDS``: saves k = 1, 2, ... for SECONDS, printing each finished k.
MODE is ``prefix`` (fluid.save / fluid.load), ``dir`` (save_persistables, one file
per variable) or ``combined`` (save_persistables into one file).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time

import numpy as np
from oar import fluid

N, SIZE = 6, 1 << 13


def build() -> fluid.Program:
    main = fluid.Program()
    blk = main.global_block()
    for i in range(N):
        blk.create_parameter(name=f"p{i}", shape=[SIZE], dtype="float32")
        blk.create_var(name=f"m{i}", shape=[SIZE], dtype="float32", persistable=True)
    return main


NAMES = [f"p{i}" for i in range(N)] + [f"m{i}" for i in range(N)]


def fill(k: int) -> None:
    for name in NAMES:
        fluid.global_scope().var(name).get_tensor().set(np.full(SIZE, k, "float32"), None)


def save(mode: str, main: fluid.Program) -> None:
    if mode == "prefix":
        fluid.save(main, "ck/model")
    else:
        fluid.io.save_persistables(None, "ck", main, filename="all" if mode == "combined" else None)


def load(mode: str, main: fluid.Program) -> list:
    """The distinct values found in the loaded checkpoint (one value = one save)."""
    with fluid.scope_guard(fluid.Scope()):
        if mode == "prefix":
            fluid.load(main, "ck/model")
        else:
            fluid.io.load_persistables(
                None, "ck", main, filename="all" if mode == "combined" else None
            )
        found = set()
        for name in NAMES:
            a = np.array(fluid.global_scope().find_var(name).get_tensor())
            found.update(np.unique(a).tolist())
    return sorted(found)


def saver(mode: str, main: fluid.Program, k: int, wfd: int) -> None:
    while True:
        fill(k)
        save(mode, main)
        os.write(wfd, f"{k}\n".encode())
        k += 1


def debris() -> bool:
    entries = os.listdir(".") + (os.listdir("ck") if os.path.isdir("ck") else [])
    return any(e.endswith((".oar-part", ".oar-staging", ".oar-tmp")) for e in entries)


def kill_trials(mode: str, trials: int, seed: int) -> None:
    rng = random.Random(seed)
    main = build()
    fill(1)
    save(mode, main)
    last = 1
    for trial in range(trials):
        k0 = (trial + 1) * 1000
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the saver
            os.close(r)
            try:
                saver(mode, main, k0, w)
            finally:
                os._exit(1)
        os.close(w)
        time.sleep(rng.uniform(0.0, 0.06))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        chunks = []
        while True:
            b = os.read(r, 65536)
            if not b:
                break
            chunks.append(b)
        os.close(r)
        done = [int(x) for x in b"".join(chunks).split()]
        mid_save = debris()
        finished = done[-1] if done else last
        writing = done[-1] + 1 if done else k0
        found = load(mode, main)
        print(
            json.dumps(
                {
                    "trial": trial,
                    "finished": finished,
                    "writing": writing,
                    "found": found,
                    "mid_save": mid_save,
                }
            ),
            flush=True,
        )
        last = found[0] if len(found) == 1 else last


def write_loop(mode: str, seconds: float) -> None:
    main = build()
    end = time.monotonic() + seconds
    k = 1
    while time.monotonic() < end:
        fill(k)
        save(mode, main)
        print(k, flush=True)
        k += 1


if __name__ == "__main__":
    if sys.argv[1] == "kill":
        kill_trials(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        write_loop(sys.argv[2], float(sys.argv[3]))
