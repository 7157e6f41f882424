"""One rank of a launched job: ``mpiexec ... python -m oar_dist.launch_worker script.py args``.

Sets the rank's own variables from its MPI rank (``PADDLE_TRAINER_ID``,
``PADDLE_CURRENT_ENDPOINT``, ``FLAGS_selected_gpus``), sends its output to
``workerlog.N``, runs the script as ``__main__`` in this process (so the MPI
rank is the script's), and leaves a status file the launcher watches: the
pid at start, the exit code at the end. A rank that dies without an exit
code was killed.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from pathlib import Path

_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")


def mpi_rank() -> int:
    for var in _RANK_VARS:
        raw = os.environ.get(var)
        if raw is not None and raw.isdigit():
            return int(raw)
    raise RuntimeError(
        f"oar_dist.launch_worker: no MPI rank in the environment ({', '.join(_RANK_VARS)}): "
        f"start jobs with python -m oar.distributed.launch"
    )


def set_rank_env(rank: int) -> None:
    """The ``PADDLE_*`` variables of ``rank`` (the launcher set the job-wide ones)."""
    env = os.environ
    endpoints = env["PADDLE_TRAINER_ENDPOINTS"].split(",")
    devices = env["OAR_LAUNCH_DEVICES"].split(",")
    local = rank % int(env["OAR_LAUNCH_NPROC_PER_NODE"])
    env["PADDLE_TRAINER_ID"] = str(rank)
    env["PADDLE_CURRENT_ENDPOINT"] = endpoints[rank]
    env["PADDLE_LOCAL_RANK"] = str(local)
    env["FLAGS_selected_gpus"] = devices[local]
    env["POD_IP"] = endpoints[rank].rsplit(":", 1)[0]


def redirect_output(log_dir: str, rank: int, restart: int) -> None:
    """Point fds 1 and 2 at ``workerlog.<rank>`` (appending after a restart)."""
    path = Path(log_dir) / f"workerlog.{rank}"
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if restart else os.O_TRUNC), 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    if restart:
        print(f"======== restart {restart} ========", flush=True)


def _write_status(status_dir: str | None, rank: int, kind: str, text: str) -> None:
    if not status_dir:
        return
    path = Path(status_dir) / f"rank.{rank}.{kind}"
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _print_script_traceback(exc: BaseException, script: str) -> None:
    """The traceback from the script's frames on (this module's and runpy's left out)."""
    tb = exc.__traceback__
    target = str(Path(script).resolve())
    while tb is not None and str(Path(tb.tb_frame.f_code.co_filename).resolve()) != target:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb or exc.__traceback__)


def main(argv: list | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print("usage: python -m oar_dist.launch_worker script.py [args...]", file=sys.stderr)
        return 2
    rank = mpi_rank()
    set_rank_env(rank)
    restart = int(os.environ.get("OAR_LAUNCH_RESTART", "0"))
    if os.environ.get("OAR_LAUNCH_LOG_DIR"):
        redirect_output(os.environ["OAR_LAUNCH_LOG_DIR"], rank, restart)
    status_dir = os.environ.get("OAR_LAUNCH_STATUS_DIR")
    import socket

    _write_status(status_dir, rank, "pid", f"{os.getpid()} {socket.gethostname()}")
    script = argv[0]
    sys.argv = argv
    sys.path[0] = str(Path(script).resolve().parent)
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException as exc:  # the rank's traceback goes to its log, as `python script.py`'s
        _print_script_traceback(exc, script)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    _write_status(status_dir, rank, "exit", str(code))
    if code != 0:
        # skip MPI_Finalize at exit: peers may be gone, and finalizing could wait for them
        os._exit(code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
