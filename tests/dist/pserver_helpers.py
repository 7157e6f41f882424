"""Start parameter-server jobs (pservers + trainers) as time-bounded subprocesses on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
HARNESS = HERE / "scripts" / "pserver_harness.py"
SEED_DIST_TRAIN = HERE.parent / "scenarios" / "data" / "dist_train.py"


def free_port(hosts=("127.0.0.1",)) -> int:
    """A TCP port free on every one of ``hosts`` (loopback addresses)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind((hosts[0], 0))
            port = s.getsockname()[1]
        ok = True
        for h in hosts[1:]:
            with socket.socket() as s:
                try:
                    s.bind((h, port))
                except OSError:
                    ok = False
        if ok:
            return port
    raise RuntimeError("no free port")


def base_env(out: Path, **extra) -> dict:
    env = dict(os.environ)
    env.update(
        OAR_HARNESS_OUT=str(out),
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        OAR_PSERVER_TIMEOUT="30",
        OAR_PSERVER_CONNECT_TIMEOUT="30",
    )
    env.update({k: str(v) for k, v in extra.items()})
    return env


class Job:
    """Processes started together; ``wait`` bounds them all and kills what is left."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.procs: dict = {}

    def start(self, name: str, argv: list, env: dict) -> subprocess.Popen:
        log = open(self.out / f"{name}.log", "wb")
        p = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=self.out)
        self.procs[name] = p
        return p

    def wait(self, timeout: float, names=None) -> dict:
        deadline = time.monotonic() + timeout
        names = list(self.procs) if names is None else names
        rcs = {}
        try:
            for n in names:
                left = max(0.1, deadline - time.monotonic())
                rcs[n] = self.procs[n].wait(timeout=left)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"job did not end within {timeout} s:\n{self.logs()}") from None
        return rcs

    def kill(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)

    def log(self, name: str) -> str:
        return (self.out / f"{name}.log").read_text(errors="replace")

    def logs(self) -> str:
        return "\n".join(f"--- {n} ---\n{self.log(n)[-3000:]}" for n in self.procs)


def seed_job(
    out: Path, trainers: int = 2, script: Path = SEED_DIST_TRAIN, harness: bool = True, **extra
) -> Job:
    """The seed's launch table on this machine: pserver i listens on 127.0.0.(i+1):port."""
    ips = ["127.0.0.1", "127.0.0.2"]
    port = free_port(tuple(ips))
    common = dict(
        PADDLE_PSERVER_IPS=",".join(ips),
        PADDLE_TRAINERS=trainers,
        PADDLE_PSERVER_PORT=port,
    )
    job = Job(out)
    argv = [sys.executable, str(HARNESS), str(script)] if harness else [sys.executable, str(script)]
    for ip in ips:
        env = base_env(out, PADDLE_TRAINING_ROLE="PSERVER", PADDLE_CURRENT_IP=ip, **common, **extra)
        job.start(f"pserver_{ip}", argv, env)
    for t in range(trainers):
        env = base_env(out, PADDLE_TRAINING_ROLE="TRAINER", PADDLE_TRAINER_ID=t, **common, **extra)
        job.start(f"trainer{t}", argv, env)
    return job
