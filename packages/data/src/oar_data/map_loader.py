"""Fluid 1.8's map-style data API: ``Dataset``, ``BatchSampler``, ``default_collate_fn`` and
``DataLoader(dataset, ...)``.

``DataLoader(dataset, feed_list, places, ...)`` reads ``dataset[i]`` for the
indices each batch of the ``BatchSampler`` names, collates the samples into one
array per field, and hands the batches to the same loader machinery as
``DataLoader.from_generator`` (feed dicts per place in static mode, lists of
eager variables in dygraph). With ``num_workers > 0`` the batches are made in
worker processes (:mod:`oar_data.workers`), in the same order as with none.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

# (worker id, number of workers, dataset) inside a DataLoader worker process, else None
_worker_info: tuple | None = None


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(idx)`` (one sample) and ``__len__``."""

    def __getitem__(self, idx: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class BatchSampler:
    """Lists of sample indices, ``batch_size`` at a time, from ``dataset`` or ``indices``."""

    def __init__(
        self,
        dataset: Any = None,
        indices: Sequence | None = None,
        shuffle: bool = False,
        batch_size: int = 1,
        drop_last: bool = False,
    ) -> None:
        if dataset is None and indices is None:
            raise ValueError("BatchSampler: either dataset or indices must be given")
        if dataset is not None and indices is not None:
            raise ValueError("BatchSampler: should not set both dataset and indices")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(
                f"BatchSampler: batch_size must be a positive int, given {batch_size!r}"
            )
        if not isinstance(shuffle, bool):
            raise TypeError(f"BatchSampler: shuffle must be a bool, given {type(shuffle).__name__}")
        if not isinstance(drop_last, bool):
            raise TypeError(
                f"BatchSampler: drop_last must be a bool, given {type(drop_last).__name__}"
            )
        self.indices = list(range(len(dataset))) if dataset is not None else list(indices)
        self.shuffle = shuffle
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list]:
        order = list(self.indices)
        if self.shuffle:
            np.random.shuffle(order)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            if len(chunk) < self.batch_size and self.drop_last:
                return
            yield chunk

    def __len__(self) -> int:
        n, b = len(self.indices), self.batch_size
        return n // b if self.drop_last else (n + b - 1) // b


def default_collate_fn(batch: Sequence) -> list:
    """Samples (tuples of fields) -> one stacked array per field, as Fluid 1.8.

    ``[(img0, label0), (img1, label1)] -> [stack(imgs), stack(labels)]``; numbers
    become 1-D arrays.
    """
    if not batch:
        raise ValueError("default_collate_fn: the batch is empty")
    first = batch[0]
    if isinstance(first, np.ndarray | numbers.Number):
        batch = [(s,) for s in batch]
        first = batch[0]
    if not isinstance(first, (list, tuple)):
        raise TypeError(
            "default_collate_fn: a sample must be a tuple/list of numpy arrays or numbers, "
            f"given {type(first).__name__}"
        )
    width = len(first)
    for i, sample in enumerate(batch):
        if len(sample) != width:
            raise ValueError(
                f"default_collate_fn: sample {i} has {len(sample)} fields, sample 0 has {width}"
            )
    fields = []
    for j in range(width):
        column = [s[j] for s in batch]
        if isinstance(column[0], numbers.Number):
            fields.append(np.array(column))
        else:
            shapes = {np.shape(c) for c in column}
            if len(shapes) > 1:
                raise ValueError(
                    f"default_collate_fn: field {j} has different shapes across the batch: "
                    f"{sorted(shapes)}"
                )
            fields.append(np.stack(column, axis=0))
    return fields


def get_worker_info() -> tuple | None:
    """``(worker id, number of workers, dataset)`` inside a worker process, else None."""
    return _worker_info


class MapDataLoader:
    """What ``fluid.io.DataLoader(dataset, ...)`` returns: iterate it (or call it) for batches."""

    def __init__(
        self,
        dataset: Any,
        feed_list: Sequence | None = None,
        places: Any = None,
        return_list: bool = False,
        batch_sampler: BatchSampler | None = None,
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        collate_fn: Callable | None = None,
        num_workers: int = 0,
        use_buffer_reader: bool = True,
        use_shared_memory: bool = True,
        timeout: float = 0,
        worker_init_fn: Callable | None = None,
    ) -> None:
        from oar_data.loader import GeneratorLoader

        if not hasattr(dataset, "__getitem__") or not hasattr(dataset, "__len__"):
            raise TypeError(
                "DataLoader: dataset must be a map-style dataset (fluid.io.Dataset with "
                f"__getitem__ and __len__), given {type(dataset).__name__}"
            )
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"DataLoader: num_workers must be an int >= 0, given {num_workers!r}")
        if not isinstance(timeout, numbers.Real) or timeout < 0:
            raise ValueError(f"DataLoader: timeout must be >= 0 seconds, given {timeout!r}")
        if batch_sampler is None:
            batch_sampler = BatchSampler(
                dataset, shuffle=shuffle, batch_size=batch_size, drop_last=drop_last
            )
        elif batch_size != 1 or shuffle or drop_last:
            raise ValueError(
                "DataLoader: batch_sampler is given, so batch_size, shuffle and drop_last must be "
                "left at their defaults (the sampler decides them)"
            )
        self.dataset = dataset
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn or default_collate_fn
        self.num_workers = num_workers
        self.use_shared_memory = use_shared_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.return_list = return_list
        capacity = max(2, 2 * num_workers)
        self._loader = GeneratorLoader(
            feed_list, capacity, use_buffer_reader, True, return_list, drop_last=True
        )
        self._loader.set_batch_generator(self._batches, places)

    def _batches(self) -> Iterator:
        if self.num_workers == 0:
            for indices in self.batch_sampler:
                yield self.collate_fn([self.dataset[i] for i in indices])
            return
        from oar_data.workers import parallel_batches

        yield from parallel_batches(
            self.dataset,
            self.batch_sampler,
            self.collate_fn,
            self.num_workers,
            self.use_shared_memory,
            self.timeout,
            self.worker_init_fn,
        )

    def __iter__(self) -> Iterator:
        return iter(self._loader)

    def __call__(self) -> Iterator:
        return self.__iter__()

    def __len__(self) -> int:
        return len(self.batch_sampler)
