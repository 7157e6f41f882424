"""``python -m oar.distributed.launch``: Paddle 1.8's launch flags, ranks started through ``mpiexec``.

The launcher works out the job (nodes, processes per node, endpoints, devices),
then :mod:`oar_dist.launch_job` runs it: one ``mpiexec`` for the whole job
(several hosts through MPI's own host list), every rank started by
:mod:`oar_dist.launch_worker`, which sets the rank's ``PADDLE_*`` variables
and writes its ``workerlog.N``. Without a GPU, ``--nproc_per_node`` CPU
processes run and ``CUDAPlace(dev_id)`` programs use the CPU fallback
(``OAR_FALLBACK_DEVICE=cpu``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

PROG = "python -m oar.distributed.launch"
DEFAULT_PORT = 6170


class LaunchError(ValueError):
    """The launch command line does not describe a job that can start."""


@dataclass
class JobSpec:
    """Everything a launch needs: the nodes, the ranks on each, and the script to run."""

    node_ips: list
    node_ip: str
    nproc_per_node: int
    devices: list  # FLAGS_selected_gpus of local rank i is devices[i]
    started_port: int
    script: str
    script_args: list
    log_dir: str | None
    max_restarts: int = 0
    gpu: bool = False
    extra_env: dict = field(default_factory=dict)

    @property
    def nranks(self) -> int:
        return self.nproc_per_node * len(self.node_ips)

    @property
    def endpoints(self) -> list:
        """``ip:port`` of every rank in rank order (Paddle: ports from ``--started_port`` per node)."""
        return [
            f"{ip}:{self.started_port + i}"
            for ip in self.node_ips
            for i in range(self.nproc_per_node)
        ]


def _str2bool(text: str) -> bool:
    low = str(text).strip().lower()
    if low in ("1", "true", "yes", "y", "on"):
        return True
    if low in ("0", "false", "no", "n", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, given {text!r}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Start a training script on several processes (one per device) through mpiexec. "
            "Each rank reads FLAGS_selected_gpus, PADDLE_TRAINER_ID, PADDLE_CURRENT_ENDPOINT, "
            "PADDLE_TRAINERS_NUM and PADDLE_TRAINER_ENDPOINTS."
        ),
    )
    p.add_argument("--cluster_node_ips", default="127.0.0.1", help="node ips, comma separated")
    p.add_argument("--node_ip", default="127.0.0.1", help="this node's ip")
    p.add_argument(
        "--use_paddlecloud",
        action="store_true",
        help="accepted for compatibility; the job is described by the other flags",
    )
    p.add_argument("--started_port", type=int, default=DEFAULT_PORT, help="first port per node")
    p.add_argument("--print_config", type=_str2bool, default=True, help="print the job config")
    p.add_argument("--selected_gpus", default=None, help="device ids, one process per id")
    p.add_argument(
        "--nproc_per_node",
        type=int,
        default=None,
        help="processes per node (without a GPU: the number of CPU processes)",
    )
    p.add_argument("--log_level", default="INFO", help="accepted for compatibility")
    p.add_argument("--log_dir", default=None, help="write each rank's output to workerlog.N here")
    p.add_argument(
        "--max_restarts",
        type=int,
        default=0,
        help="restart the whole job up to K times after a failure (beyond Paddle 1.8)",
    )
    p.add_argument("training_script", help="the training script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _gpu_count() -> int:
    from oar.api import registries

    dev = registries().devices.get("cuda")
    return dev.count() if dev is not None and dev.available() else 0


def make_spec(args: argparse.Namespace) -> JobSpec:
    """Check the flags against each other and the machine; the job they describe."""
    node_ips = [ip.strip() for ip in args.cluster_node_ips.split(",") if ip.strip()]
    if not node_ips:
        raise LaunchError(f"--cluster_node_ips: no ip in {args.cluster_node_ips!r}")
    if len(set(node_ips)) != len(node_ips):
        raise LaunchError(f"--cluster_node_ips lists an ip twice: {args.cluster_node_ips!r}")
    if args.node_ip not in node_ips:
        raise LaunchError(
            f"--node_ip {args.node_ip} is not one of --cluster_node_ips {','.join(node_ips)}"
        )
    if args.max_restarts < 0:
        raise LaunchError(f"--max_restarts must be >= 0, given {args.max_restarts}")
    if not 0 < args.started_port < 65536:
        raise LaunchError(f"--started_port must be a port number, given {args.started_port}")
    gpus = _gpu_count()
    if args.selected_gpus:
        try:
            devices = [int(x) for x in args.selected_gpus.split(",") if x.strip()]
        except ValueError:
            raise LaunchError(
                f"--selected_gpus must be device ids like 0,1,2, given {args.selected_gpus!r}"
            ) from None
        if not devices or len(set(devices)) != len(devices):
            raise LaunchError(
                f"--selected_gpus: ids must be distinct, given {args.selected_gpus!r}"
            )
        if args.nproc_per_node is not None and args.nproc_per_node != len(devices):
            raise LaunchError(
                f"--nproc_per_node {args.nproc_per_node} does not match the "
                f"{len(devices)} ids of --selected_gpus {args.selected_gpus}"
            )
        if gpus and max(devices) >= gpus:
            raise LaunchError(
                f"--selected_gpus {args.selected_gpus}: this node has {gpus} GPU(s) (ids 0-{gpus - 1})"
            )
    else:
        nproc = args.nproc_per_node if args.nproc_per_node is not None else max(gpus, 1)
        if nproc < 1:
            raise LaunchError(f"--nproc_per_node must be >= 1, given {nproc}")
        devices = list(range(nproc))
    if args.started_port + len(devices) - 1 > 65535:
        raise LaunchError(
            f"--started_port {args.started_port}: the {len(devices)} ranks per node need ports "
            f"{args.started_port}..{args.started_port + len(devices) - 1}, past 65535"
        )
    script = args.training_script
    if not Path(script).is_file():
        raise LaunchError(f"training script {script!r} does not exist")
    return JobSpec(
        node_ips=node_ips,
        node_ip=args.node_ip,
        nproc_per_node=len(devices),
        devices=devices,
        started_port=args.started_port,
        script=script,
        script_args=list(args.training_script_args),
        log_dir=args.log_dir,
        max_restarts=args.max_restarts,
        gpu=gpus > 0,
    )


def find_mpiexec() -> str:
    """The ``mpiexec`` next to this Python (the mpich wheel's), else the one on PATH, which
    must be MPICH's too (see :func:`check_mpiexec`)."""
    local = Path(sys.executable).parent / "mpiexec"
    if local.exists():
        return str(local)
    found = shutil.which("mpiexec")
    if not found:
        raise LaunchError(f"{PROG}: no mpiexec found: pip install mpich mpi4py")
    check_mpiexec(found)
    return found


def mpiexec_flavor(mpiexec: str) -> str:
    """'mpich' (Hydra), 'openmpi' or 'unknown', from ``mpiexec --version``."""
    import subprocess

    try:
        out = subprocess.run(
            [mpiexec, "--version"], capture_output=True, text=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    text = out.stdout + out.stderr
    if "HYDRA" in text.upper():
        return "mpich"
    if "Open MPI" in text or "OpenRTE" in text or "open-mpi" in text:
        return "openmpi"
    return "unknown"


def check_mpiexec(mpiexec: str) -> None:
    """The launcher drives MPICH's mpiexec (Hydra's flags, its exit on a rank's failure); Open
    MPI's takes other flags and answers with an unrelated "unknown option" error."""
    if mpiexec_flavor(mpiexec) == "openmpi":
        raise LaunchError(
            f"{PROG}: {mpiexec} is Open MPI's mpiexec; the launcher runs MPICH's (Hydra): "
            f"pip install mpich mpi4py in this environment (its mpiexec, next to "
            f"{Path(sys.executable).name}, is used first)"
        )


def rank_env(spec: JobSpec, status_dir: str, restart: int) -> dict:
    """The variables every rank gets (the worker derives the per-rank ones from its MPI rank)."""
    env = {
        "PADDLE_TRAINERS_NUM": str(spec.nranks),
        "PADDLE_TRAINER_ENDPOINTS": ",".join(spec.endpoints),
        "OAR_LAUNCH_NPROC_PER_NODE": str(spec.nproc_per_node),
        "OAR_LAUNCH_DEVICES": ",".join(str(d) for d in spec.devices),
        "OAR_LAUNCH_STATUS_DIR": status_dir,
        "OAR_LAUNCH_RESTART": str(restart),
        "PYTHONUNBUFFERED": "1",
    }
    if spec.log_dir:
        env["OAR_LAUNCH_LOG_DIR"] = str(Path(spec.log_dir).resolve())
    if not spec.gpu:
        # CUDAPlace(dev_id) programs run on the CPU, and the ranks share the cores
        env.setdefault("OAR_FALLBACK_DEVICE", os.environ.get("OAR_FALLBACK_DEVICE", "cpu"))
        threads = str(max(1, (os.cpu_count() or 1) // spec.nproc_per_node))
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = os.environ.get(var, threads)
    env.update(spec.extra_env)
    return env


def mpiexec_command(spec: JobSpec, mpiexec: str) -> list:
    """One ``mpiexec`` for the whole job; ranks fill the hosts in order, ``nproc_per_node`` each."""
    # the launcher, not mpiexec, stops the job when a rank fails: it knows which rank it was
    cmd = [mpiexec, "-disable-auto-cleanup"]
    if len(spec.node_ips) > 1:
        cmd += ["-hosts", ",".join(f"{ip}:{spec.nproc_per_node}" for ip in spec.node_ips)]
    cmd += ["-n", str(spec.nranks), sys.executable, "-m", "oar_dist.launch_worker"]
    return cmd + [spec.script, *spec.script_args]


def print_config(args: argparse.Namespace, spec: JobSpec, cmd: list) -> None:
    print("-----------  Configuration Arguments -----------", flush=True)
    for key, value in sorted(vars(args).items()):
        print(f"{key}: {value}")
    print(f"trainers_num: {spec.nranks}")
    print(f"trainer_endpoints: {','.join(spec.endpoints)}")
    device = "GPU" if spec.gpu else "CPU (CUDAPlace runs on the CPU: OAR_FALLBACK_DEVICE=cpu)"
    print(f"devices: {spec.devices} on {device}")
    print(f"command: {' '.join(cmd)}")
    print("------------------------------------------------", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse Paddle's launch flags, run the job (restarting it up to ``--max_restarts``)."""
    from oar_dist.launch_job import run_job

    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        spec = make_spec(args)
        if args.node_ip != spec.node_ips[0]:
            print(
                f"{PROG}: the ranks of node {args.node_ip} are started over MPI by the launch on "
                f"the first node {spec.node_ips[0]} (mpiexec -hosts); nothing to do here",
                flush=True,
            )
            return 0
        cmd = mpiexec_command(spec, find_mpiexec())
    except LaunchError as exc:
        parser.error(str(exc))
    if args.print_config:
        print_config(args, spec, cmd)
    return run_job(spec, cmd)


__all__ = [
    "JobSpec",
    "LaunchError",
    "build_parser",
    "check_mpiexec",
    "main",
    "make_spec",
    "mpiexec_command",
    "mpiexec_flavor",
]
