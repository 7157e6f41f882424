"""Collective communication: the backend interface, the backends, and the ring table.

Backends (registered through ``oar_register_collective_backends``):

- ``mpi``: :class:`~oar_dist.collective.mpi.MPIBackend`, one rank per process (mpi4py);
- ``threads``: :class:`~oar_dist.collective.threads.ThreadBackend`, ranks are the
  device threads of one process (``ThreadBackend(group, rank)``);
- ``single``: :class:`~oar_dist.collective.single.SingleBackend`, a world of one.

Collective ops find theirs with :func:`get_ring` (``ring_id`` -> backend).
"""

from __future__ import annotations

from oar_dist.collective.base import (
    DEFAULT_BUCKET_BYTES,
    REDUCE_OPS,
    CollectiveBackend,
    CollectiveError,
    plan_buckets,
)
from oar_dist.collective.rings import drop_ring, get_ring, set_ring, thread_rings
from oar_dist.collective.single import SingleBackend
from oar_dist.collective.threads import ThreadBackend, ThreadGroup
from oar_dist.collective.timeouts import collective_timeout

__all__ = [
    "DEFAULT_BUCKET_BYTES",
    "REDUCE_OPS",
    "CollectiveBackend",
    "CollectiveError",
    "SingleBackend",
    "ThreadBackend",
    "ThreadGroup",
    "collective_timeout",
    "drop_ring",
    "get_ring",
    "make_backend",
    "plan_buckets",
    "set_ring",
    "thread_rings",
]


def make_backend(name: str, **kwargs) -> CollectiveBackend:
    """A backend from the ``collective_backends`` registry (``mpi``, ``threads``, ...)."""
    from oar.api import registries

    return registries().collective_backends.get(name)(**kwargs)
