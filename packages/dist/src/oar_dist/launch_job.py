"""Run a launched job: start ``mpiexec``, watch every rank, stop the job at the first failure.

``mpiexec`` alone cannot tell which rank failed, and MPICH lets the other ranks
run on (or wait in a collective) when one exits with an error. So the launcher
watches the status files :mod:`oar_dist.launch_worker` leaves: a non-zero exit
code, or a local rank whose process is gone without one (killed), fails the
job at once. The launcher then stops every rank, prints the failing rank's
log tail, and restarts the whole job while ``--max_restarts`` allows.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from oar_dist.launch import PROG, JobSpec, rank_env

POLL_S = 0.05
# ranks that fail together (an MPI_Abort takes every rank down) are reported together
SETTLE_S = 0.3
STOP_GRACE_S = 5.0
TAIL_LINES = 30


@dataclass
class Failure:
    """Why a job ended badly: the rank (None if mpiexec itself failed) and a description."""

    rank: int | None
    what: str
    code: int
    others: list = field(default_factory=list)  # further failed ranks, seen together


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return True


def find_failure(status: Path, nranks: int, host: str) -> Failure | None:
    """The failed rank by the status files, or None while all are well.

    A killed rank is the cause before a rank that exited with an error: its
    peers' collectives fail because it is gone.
    """
    killed, errored = [], []
    for rank in range(nranks):
        code = _read(status / f"rank.{rank}.exit")
        if code is None:
            started = _read(status / f"rank.{rank}.pid")
            if not started:
                continue
            pid, _, where = started.partition(" ")
            if where.strip() != host or _alive(int(pid)):
                continue
            code = _read(status / f"rank.{rank}.exit")  # written just after we looked?
            if code is None:
                killed.append(
                    Failure(rank, f"died without exiting (pid {pid}, killed by a signal)", 1)
                )
                continue
        if code.strip() != "0":
            errored.append(Failure(rank, f"exited with code {code.strip()}", int(code)))
    found = killed + errored
    if not found:
        return None
    first = found[0]
    first.others = [f.rank for f in found[1:]]
    if len(found) > 1:
        first.what += "; also " + ", ".join(f"rank {f.rank} {f.what}" for f in found[1:])
    return first


def _stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """Stop mpiexec and every rank (its process group), then make sure they are gone."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return
    try:
        proc.wait(STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def log_tail(log_dir: str | None, rank: int | None, lines: int = TAIL_LINES) -> str:
    if not log_dir or rank is None:
        return ""
    text = _read(Path(log_dir) / f"workerlog.{rank}")
    if text is None:
        return ""
    return "\n".join(text.rstrip("\n").split("\n")[-lines:])


class _Signals:
    """Forward SIGINT/SIGTERM/SIGHUP to the job while it runs; remember the first one."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.received: int | None = None
        self._old: dict = {}

    def __enter__(self) -> _Signals:
        for sig in self.SIGNALS:
            self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)

    def _handle(self, signum: int, frame: object) -> None:
        self.received = self.received or signum
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signum)
            except ProcessLookupError:
                pass


def run_once(spec: JobSpec, cmd: list, restart: int, signals: _Signals) -> Failure | None:
    """One attempt of the job; None when every rank exited 0."""
    status = Path(tempfile.mkdtemp(prefix="oar-launch-"))
    try:
        env = dict(os.environ)
        env.update(rank_env(spec, str(status), restart))
        if spec.log_dir:
            Path(spec.log_dir).mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(cmd, env=env, start_new_session=True)
        signals.proc = proc
        host = socket.gethostname()
        failure = None
        while True:
            done = proc.poll() is not None
            failure = find_failure(status, spec.nranks, host)
            if failure is not None or done or signals.received:
                break
            time.sleep(POLL_S)
        if signals.received:
            try:
                proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                _stop(proc, signal.SIGKILL)
            return Failure(None, f"stopped by signal {signals.received}", 128 + signals.received)
        if failure is not None:
            time.sleep(SETTLE_S)
            failure = find_failure(status, spec.nranks, host) or failure
            _stop(proc)
            return failure
        code = proc.returncode
        missing = [r for r in range(spec.nranks) if _read(status / f"rank.{r}.exit") != "0"]
        if code != 0 or missing:
            rank = missing[0] if missing else None
            return Failure(rank, f"mpiexec exited with code {code}", code or 1)
        return None
    finally:
        signals.proc = None
        shutil.rmtree(status, ignore_errors=True)


def report(spec: JobSpec, failure: Failure) -> None:
    who = f"rank {failure.rank}" if failure.rank is not None else "the job"
    msg = [f"{PROG}: {who} {failure.what}; the job of {spec.nranks} ranks was stopped"]
    tail = log_tail(spec.log_dir, failure.rank)
    if tail:
        msg.append(
            f"---- last lines of {Path(spec.log_dir) / f'workerlog.{failure.rank}'} ----\n{tail}"
        )
        for rank in failure.others[:3]:
            other = log_tail(spec.log_dir, rank, 10)
            if other:
                msg.append(f"---- last lines of {Path(spec.log_dir) / f'workerlog.{rank}'} ----")
                msg.append(other)
    elif failure.rank is not None and not spec.log_dir:
        msg.append("(its output is above; --log_dir keeps each rank's output in workerlog.N)")
    print("\n".join(msg), file=sys.stderr, flush=True)


def run_job(spec: JobSpec, cmd: list) -> int:
    """Run the job, restarting it after a failure up to ``spec.max_restarts`` times."""
    with _Signals() as signals:
        for restart in range(spec.max_restarts + 1):
            failure = run_once(spec, cmd, restart, signals)
            if failure is None:
                return 0
            report(spec, failure)
            if signals.received:
                return failure.code
            if restart < spec.max_restarts:
                print(
                    f"{PROG}: restarting the job ({restart + 1} of {spec.max_restarts} restarts)",
                    file=sys.stderr,
                    flush=True,
                )
        return failure.code if failure.code > 0 else 1
