"""Hook implementations: reader decorators and the facade names oar-data provides."""

from __future__ import annotations

from typing import Any

from oar.api import hookimpl


@hookimpl
def oar_register_reader_decorators(registry: Any) -> None:
    from oar_data import decorators

    for name in decorators.__all__:
        if name != "ComposeNotAligned":
            registry.register(name, getattr(decorators, name))


@hookimpl
def oar_fluid_api() -> dict:
    from oar_data import (
        batching,
        contrib_reader,
        data_feed_desc,
        data_generator,
        dataset,
        decorators,
        fluid_reader,
        industrial,
        map_loader,
        reader,
    )
    from oar_data.feeder import DataFeeder
    from oar_data.loader import DataLoader, PyReader

    api: dict = {
        "oar.batch": batching.batch,
        "oar.reader": reader,
        "oar.dataset": dataset,
        "io.PyReader": PyReader,
        "io.DataLoader": DataLoader,
        "io.Dataset": map_loader.Dataset,
        "io.BatchSampler": map_loader.BatchSampler,
        "io.default_collate_fn": map_loader.default_collate_fn,
        "DatasetFactory": industrial.DatasetFactory,
        "DataFeedDesc": data_feed_desc.DataFeedDesc,
        "dataset": industrial,
        "incubate.data_generator": data_generator,
        "io.batch": batching.batch,
        "io.ComposeNotAligned": decorators.ComposeNotAligned,
        "DataFeeder": DataFeeder,
        "contrib.reader": contrib_reader,
        "contrib.distributed_batch_reader": contrib_reader.distributed_batch_reader,
        "oar.reader.decorator": decorators,
        "reader": fluid_reader,
    }
    for name in decorators.__all__:
        api[f"io.{name}"] = getattr(decorators, name)
    return api
