"""Which communicator a collective op uses: ``ring_id`` -> backend, per process or per thread.

Fluid's collective ops name a communication ring by ``ring_id``; the ring is
created by ``c_comm_init`` (transpiled startup programs) or by the data
parallel runner. Process-wide rings serve MPI ranks; a thread-local ring
overrides them for a device thread of single-machine data parallel, so the
same program and kernels serve both.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Mapping

from oar_dist.collective.base import CollectiveBackend
from oar_dist.collective.single import SingleBackend

_process_rings: dict[int, CollectiveBackend] = {}
_local = threading.local()

# set by launchers/MPI: if any says the job has more than one process, a missing ring is an error
_WORLD_SIZE_VARS = ("PADDLE_TRAINERS_NUM", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS")


def set_ring(ring_id: int, backend: CollectiveBackend) -> None:
    """Make ``backend`` the process-wide communicator of ``ring_id`` (``c_comm_init`` does this)."""
    _process_rings[int(ring_id)] = backend


def drop_ring(ring_id: int) -> None:
    _process_rings.pop(int(ring_id), None)


@contextlib.contextmanager
def thread_rings(rings: Mapping[int, CollectiveBackend]) -> Iterator[None]:
    """Within the block, this thread's collective ops use ``rings`` before the process-wide ones."""
    old = getattr(_local, "rings", None)
    merged = dict(old or {})
    merged.update(rings)
    _local.rings = merged
    try:
        yield
    finally:
        _local.rings = old


def _job_size() -> int:
    for var in _WORLD_SIZE_VARS:
        raw = os.environ.get(var)
        if raw and raw.isdigit():
            return int(raw)
    return 1


def get_ring(ring_id: int, who: str = "collective op") -> CollectiveBackend:
    """The communicator of ``ring_id`` for this thread.

    A process alone in its job (no launcher or MPI variable says otherwise) is
    a world of one, as plain ``python`` is for MPI: ring 0 is then the identity.
    """
    rings = getattr(_local, "rings", None)
    if rings:
        backend = rings.get(ring_id)
        if backend is not None:
            return backend
    backend = _process_rings.get(ring_id)
    if backend is not None:
        return backend
    size = _job_size()
    if ring_id == 0 and size <= 1:
        backend = _process_rings[0] = SingleBackend()
        return backend
    raise RuntimeError(
        f"{who}: no communicator for ring_id {ring_id} in this process (job size {size}): "
        f"run the startup program of a transpiled program first (its c_comm_init op creates "
        f"ring 0), or use CompiledProgram.with_data_parallel"
    )
