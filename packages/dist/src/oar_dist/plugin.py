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


@hookimpl
def oar_fluid_api() -> dict:
    from oar_dist import dygraph_parallel, launch

    return {
        "oar.distributed.launch": launch.main,
        "dygraph.parallel": dygraph_parallel,
        "dygraph.ParallelEnv": dygraph_parallel.ParallelEnv,
        "dygraph.DataParallel": dygraph_parallel.DataParallel,
        "dygraph.prepare_context": dygraph_parallel.prepare_context,
    }
