"""Hook implementations of oar-dist: collective backends (ops, kernels and facade names follow)."""

from __future__ import annotations

from typing import Any

from oar.hookspecs import hookimpl


def _mpi_factory(**kwargs: Any) -> Any:
    from oar_dist.collective.mpi import MPIBackend

    return MPIBackend(**kwargs)


@hookimpl
def oar_register_collective_backends(registry: Any) -> None:
    from oar_dist.collective import SingleBackend, ThreadBackend

    registry.register("mpi", _mpi_factory)
    registry.register("threads", ThreadBackend)
    registry.register("single", SingleBackend)
