"""Hook implementations of oar-dist: collective backends, ops and kernels, the data-parallel runner."""

from __future__ import annotations

from typing import Any

from oar.api import hookimpl

DEVICE = "cpu"


def _mpi_factory(**kwargs: Any) -> Any:
    from oar_dist.collective.mpi import MPIBackend

    return MPIBackend(**kwargs)


def _nccl_factory(rank: int, nranks: int, device_id: int = 0, **kwargs: Any) -> Any:
    from oar_dist.collective.mpi import MPIBackend
    from oar_dist.collective.nccl import nccl_job_backend

    return nccl_job_backend(rank, nranks, device_id, MPIBackend(), **kwargs)


@hookimpl
def oar_register_collective_backends(registry: Any) -> None:
    from oar_dist.collective import SingleBackend, ThreadBackend

    registry.register("mpi", _mpi_factory)
    registry.register("threads", ThreadBackend)
    registry.register("single", SingleBackend)
    registry.register("nccl", _nccl_factory)


@hookimpl
def oar_register_ops(registry: Any) -> None:
    from oar_dist.ops import collective, pserver, tables

    collective.register(registry)
    pserver.register(registry)
    tables.register(registry)


@hookimpl
def oar_register_kernels(registry: Any) -> None:
    from oar_dist.kernels import collective, geo, pserver, tables

    for op_type, dtypes, fn in collective.kernels():
        registry.register_kernel(op_type, DEVICE, dtypes, fn)
    for op_type, dtypes, fn in collective.cuda_kernels():
        registry.register_kernel(op_type, "cuda", dtypes, fn)
    for op_type, dtypes, fn, sparse in pserver.kernels() + tables.kernels() + geo.kernels():
        registry.register_kernel(op_type, DEVICE, dtypes, fn, selected_rows=sparse)


@hookimpl
def oar_register_pserver_transports(registry: Any) -> None:
    from oar_dist.pserver.transport import ZmqTransport

    registry.register("zmq", ZmqTransport)


@hookimpl
def oar_executor_closed(executor: Any) -> None:
    from oar_dist.pserver import client

    if client.connected():
        client.close_all()


@hookimpl
def oar_data_parallel_runner(compiled: Any, num_places: int) -> Any:
    from oar_dist.data_parallel import DataParallelRunner

    return DataParallelRunner(compiled, num_places)


@hookimpl
def oar_fluid_api() -> dict:
    from oar_dist import contrib_tables, dygraph_parallel, incubate, launch, transpiler

    return {
        "DistributeTranspiler": transpiler.DistributeTranspiler,
        "DistributeTranspilerConfig": transpiler.DistributeTranspilerConfig,
        "transpiler": transpiler,
        "oar.distributed.launch": launch.main,
        "dygraph.parallel": dygraph_parallel,
        "dygraph.ParallelEnv": dygraph_parallel.ParallelEnv,
        "dygraph.DataParallel": dygraph_parallel.DataParallel,
        "dygraph.prepare_context": dygraph_parallel.prepare_context,
        "incubate": incubate,
        "contrib.load_persistables_for_increment": contrib_tables.load_persistables_for_increment,
        "contrib.load_persistables_for_inference": contrib_tables.load_persistables_for_inference,
    }
