"""``fluid.io.DataLoader.from_generator`` and ``fluid.io.PyReader``: asynchronous feeding.

A background thread reads the user's generator, batches it when needed and
converts every batch to checked arrays / LoDTensors, keeping up to
``capacity`` batches ready in a bounded queue, so the training loop only
pops finished feeds.

- Iterable mode (``iterable=True``): calling the loader starts an epoch and
  yields, per step, a list with one feed dict per place (``return_list``: a
  list of arrays per place; just that list when there is one place).
- Non-iterable mode: the loader attaches itself to the program of its data
  layers (``Program._readers``); the executor calls :meth:`_before_run` before
  each run, which pops the next batch into the feeds and raises
  ``fluid.core.EOFException`` at the end of the epoch. ``start()`` begins an
  epoch, ``reset()`` ends it (stopping the thread).

A failure in the generator or in the conversion is raised in the training
loop with its traceback; breaking out of an epoch, ``reset()`` or dropping
the loader stops its thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from oar.api import LoDTensor, merge_feeds
from oar.errors import EOFException

from oar_data._background import BackgroundIter
from oar_data._procs import ProcessMerge
from oar_data.batching import batch as make_batches
from oar_data.convert import (
    batch_to_arrays,
    batch_to_feed,
    samples_to_arrays,
    samples_to_feed,
    specs_for,
)


def _normalize_places(places: Any, iterable: bool, what: str) -> list | None:
    if places is None:
        if iterable:
            raise ValueError(
                f"{what}: places must be given when the loader is iterable, e.g. "
                f"places=fluid.cpu_places(1) or fluid.cuda_places()"
            )
        return None
    if isinstance(places, (list, tuple)):
        places = list(places)
    else:
        places = [places]
    if not places:
        raise ValueError(f"{what}: places is empty")
    return places


class GeneratorLoader:
    """The loader behind ``DataLoader.from_generator`` and ``PyReader``."""

    def __init__(
        self,
        feed_list: Sequence | None = None,
        capacity: int | None = None,
        use_double_buffer: bool = True,
        iterable: bool = True,
        return_list: bool = False,
        use_multiprocess: bool = False,
        drop_last: bool = True,
        _what: str = "DataLoader",
    ) -> None:
        from oar.api import in_dygraph_mode

        self._what = _what
        self._dygraph = in_dygraph_mode()
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:
            raise ValueError(
                f"{_what}: capacity must be a positive int (batches kept ready), given {capacity!r}"
            )
        if self._dygraph:
            # Fluid 1.8: in dygraph the loader yields lists of eager variables; feed_list is unused
            if not iterable or not return_list:
                raise ValueError(
                    f"{_what}: in dygraph mode the loader must be iterable with return_list=True"
                )
            feed_list = []
        elif not feed_list:
            raise ValueError(f"{_what}: feed_list must be a non-empty list of data Variables")
        self._specs = specs_for(feed_list)
        self._feed_list = list(feed_list)
        self._capacity = capacity
        self._use_double_buffer = use_double_buffer
        self._iterable = iterable
        self._return_list = return_list
        self._use_multiprocess = use_multiprocess
        self._drop_last = drop_last
        self._source: Callable | None = None
        self._convert: Callable | None = None
        self._places: list | None = None
        self._running: BackgroundIter | None = None
        self._exhausted = False
        if not iterable:
            program = getattr(getattr(feed_list[0], "block", None), "program", None)
            if program is None:
                from oar.api import default_main_program

                program = default_main_program()
            _attach(program, self)
            self._program_ref = program
        self._replaced_by: str | None = None

    # --- data sources ------------------------------------------------------------------------------
    @property
    def iterable(self) -> bool:
        return self._iterable

    def set_sample_generator(
        self, reader: Callable, batch_size: int, drop_last: bool = True, places: Any = None
    ) -> GeneratorLoader:
        """Samples (one tuple of per-layer values each), batched here by ``batch_size``."""
        self._check_callable(reader)
        single = len(self._specs) == 1 and not self._dygraph

        def samples():
            for s in reader():
                yield s if isinstance(s, (list, tuple)) or not single else (s,)

        return self._set(make_batches(samples, batch_size, drop_last), self._from_samples, places)

    def set_sample_list_generator(self, reader: Callable, places: Any = None) -> GeneratorLoader:
        """Lists of samples (e.g. ``oar.batch(reader, n)``), one list per batch."""
        self._check_callable(reader)
        return self._set(reader, self._from_samples, places)

    def set_batch_generator(self, reader: Callable, places: Any = None) -> GeneratorLoader:
        """Batches as lists (or tuples) of arrays / LoDTensors, one per data layer."""
        self._check_callable(reader)
        return self._set(reader, self._from_batch, places)

    def _check_callable(self, reader: Any) -> None:
        if not callable(reader):
            raise TypeError(
                f"{self._what}: the generator must be a callable returning an iterable "
                f"(pass the function, not its result), given {type(reader).__name__}"
            )

    def _set(self, source: Callable, convert: Callable, places: Any) -> GeneratorLoader:
        self._places = _normalize_places(places, self._iterable, self._what)
        self._source = source
        self._convert = convert
        return self

    def _from_samples(self, samples: Any) -> dict:
        return samples_to_feed(self._specs, samples, self._what)

    def _from_batch(self, batch: Any) -> dict:
        return batch_to_feed(self._specs, batch, self._what)

    # --- the background pipeline -------------------------------------------------------------------
    def _start_pipeline(self) -> BackgroundIter:
        if self._source is None:
            raise RuntimeError(
                f"{self._what}: no data source; call set_sample_generator / set_sample_list_generator / "
                f"set_batch_generator (PyReader: decorate_*) first"
            )
        source, specs, what, from_batch = (
            self._source,
            self._specs,
            self._what,
            self._convert == self._from_batch,
        )
        # the thread must not hold the loader itself, so dropping the loader stops it
        if self._dygraph:
            convert = (
                (lambda b: batch_to_arrays(b, what))
                if from_batch
                else (lambda s: samples_to_arrays(s, what))
            )
        else:
            convert = (
                (lambda b: batch_to_feed(specs, b, what))
                if from_batch
                else (lambda s: samples_to_feed(specs, s, what))
            )
        if self._use_multiprocess:

            def converted():
                return map(convert, source())

            capacity = self._capacity
            return BackgroundIter(
                lambda stop: ProcessMerge([converted], True, capacity, stop),
                capacity,
                name="oar-dataloader",
                pass_stop=True,
            )
        return BackgroundIter(source, self._capacity, name="oar-dataloader", transform=convert)

    # --- iterable mode -----------------------------------------------------------------------------
    def __call__(self):
        return self.__iter__()

    def __iter__(self):
        if not self._iterable:
            raise RuntimeError(
                f"{self._what}: a non-iterable loader is driven by start()/reset() and "
                f"exe.run, not by iteration (create it with iterable=True to iterate)"
            )
        pipeline = self._start_pipeline()
        return self._progress(
            self._epoch(
                pipeline,
                len(self._places),
                self._return_list,
                self._drop_last,
                [s.name for s in self._specs],
                self._dygraph,
            )
        )

    def _progress(self, epoch):
        """The epoch with a tqdm bar when ``OAR_PROGRESS=1`` (oar.viz; off by default)."""
        from oar.api import maybe_progress

        return maybe_progress(epoch, desc=self._what)

    @staticmethod
    def _epoch(
        pipeline: BackgroundIter,
        nplaces: int,
        return_list: bool,
        drop_last: bool,
        names: list,
        dygraph: bool,
    ):
        if dygraph:
            from oar.api import to_variable
        try:
            group = []
            for feed in pipeline:
                if dygraph:
                    item = [to_variable(a) for a in feed]
                else:
                    item = [feed[n] for n in names] if return_list else feed
                group.append(item)
                if len(group) == nplaces:
                    yield group[0] if return_list and nplaces == 1 else group
                    group = []
            if group and not drop_last:
                yield group
        finally:
            pipeline.close()

    # --- non-iterable mode -------------------------------------------------------------------------
    def start(self) -> None:
        """Begin an epoch (non-iterable mode)."""
        if self._iterable:
            raise RuntimeError(
                f"{self._what}: start() is for non-iterable loaders; iterate this one "
                f"with `for data in loader():`"
            )
        if self._replaced_by is not None:
            raise RuntimeError(
                f"{self._what}: this loader was replaced by a newer {self._replaced_by} created on "
                f"the same program for the same data layers; start() and reset() the new one"
            )
        if self._running is not None:
            raise RuntimeError(
                f"{self._what}: start() called twice without reset(); call reset() after "
                f"the EOFException that ends each epoch"
            )
        self._exhausted = False
        self._running = self._start_pipeline()

    def reset(self) -> None:
        """End the epoch (non-iterable mode): stop the thread and drop the batches still queued."""
        if self._iterable:
            raise RuntimeError(f"{self._what}: reset() is for non-iterable loaders")
        if self._running is not None:
            self._running.close()
        self._running = None
        self._exhausted = False

    def _before_run(self, arrays: dict, lods: dict) -> None:
        """Called by the executor before each run: add the next batch to the feeds."""
        names = [s.name for s in self._specs]
        if all(n in arrays for n in names):  # fed by hand: leave the queue alone
            return
        if self._running is None:
            raise RuntimeError(
                f"{self._what}: the program reads data layers {names} from a non-iterable loader that "
                f"was not started; call loader.start() before exe.run (and reset() after EOFException)"
            )
        if self._exhausted:
            raise EOFException(f"{self._what}: the epoch has ended; call reset() and start() again")
        # a data-parallel run (CompiledProgram.with_data_parallel) takes one batch per device
        wanted = getattr(self._program_ref, "_reader_batches_per_run", 1)
        feeds = []
        for _ in range(wanted):
            try:
                feeds.append(next(self._running))
            except StopIteration:
                self._exhausted = True
                break
        if not feeds or (len(feeds) < wanted and self._drop_last):
            self._exhausted = True
            raise EOFException(f"{self._what}: end of epoch; call reset() before the next start()")
        feed = feeds[0] if len(feeds) == 1 else merge_feeds(feeds)
        for name, value in feed.items():
            if isinstance(value, LoDTensor):
                arrays[name] = value._array
                if value._lod:
                    lods[name] = value._lod
            else:
                arrays[name] = value

    def _detach(self, by: str) -> None:
        """Stop this loader's thread: a newer loader replaced it on its program."""
        if self._running is not None:
            self._running.close()
        self._running = None
        self._replaced_by = by

    def __del__(self) -> None:
        running = getattr(self, "_running", None)
        if running is not None:
            running.close()


def _attach(program: Any, loader: GeneratorLoader) -> None:
    """Attach a non-iterable ``loader`` to ``program``, replacing the loaders it supersedes.

    A loader created again for (some of) the same data layers of a program - a
    training script that rebuilds its loader each epoch, a notebook cell run
    twice - replaces the older one: its thread is stopped and it leaves the
    program, so the executor asks only the new loader for batches.
    """
    names = {s.name for s in loader._specs}
    kept = []
    for old in program._readers:
        if isinstance(old, GeneratorLoader) and names & {s.name for s in old._specs}:
            old._detach(loader._what)
        else:
            kept.append(old)
    kept.append(loader)
    program._readers[:] = kept


class DataLoader:
    """``fluid.io.DataLoader``: ``DataLoader(dataset, ...)`` (Fluid 1.8, map-style datasets,
    see :mod:`oar_data.map_loader`) and the ``from_generator`` / ``from_dataset`` factories."""

    def __new__(  # type: ignore[misc]
        cls,
        dataset: Any,
        feed_list: Sequence | None = None,
        places: Any = None,
        return_list: bool = False,
        batch_sampler: Any = None,
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        collate_fn: Callable | None = None,
        num_workers: int = 0,
        use_buffer_reader: bool = True,
        use_shared_memory: bool = True,
        timeout: float = 0,
        worker_init_fn: Callable | None = None,
    ) -> Any:
        from oar_data.map_loader import MapDataLoader

        return MapDataLoader(
            dataset,
            feed_list,
            places,
            return_list,
            batch_sampler,
            batch_size,
            shuffle,
            drop_last,
            collate_fn,
            num_workers,
            use_buffer_reader,
            use_shared_memory,
            timeout,
            worker_init_fn,
        )

    @staticmethod
    def from_generator(
        feed_list: Sequence | None = None,
        capacity: int | None = None,
        use_double_buffer: bool = True,
        iterable: bool = True,
        return_list: bool = False,
        use_multiprocess: bool = False,
        drop_last: bool = True,
    ) -> GeneratorLoader:
        """A loader fed by a Python generator (see :class:`GeneratorLoader`)."""
        return GeneratorLoader(
            feed_list,
            capacity,
            use_double_buffer,
            iterable,
            return_list,
            use_multiprocess,
            drop_last,
        )

    @staticmethod
    def from_dataset(dataset: Any, places: Any, drop_last: bool = True) -> Any:
        """An iterable loader over a ``fluid.DatasetFactory`` dataset's batches."""
        run = getattr(dataset, "_all_batches", None)
        if run is None:
            raise TypeError(
                "DataLoader.from_dataset: dataset must come from fluid.DatasetFactory()"
                f".create_dataset(...), given {type(dataset).__name__}"
            )
        dataset.drop_last = drop_last
        loader = GeneratorLoader(dataset.use_vars, 4, True, True, False, drop_last=drop_last)
        return loader.set_batch_generator(run, places)


class _QueueView:
    """What Fluid's ``PyReader.queue`` (a blocking queue) answers: its size and capacity."""

    def __init__(self, loader: GeneratorLoader) -> None:
        self._loader = loader

    def size(self) -> int:
        running = self._loader._running
        q = getattr(running, "_q", None)
        return q.qsize() if q is not None else 0

    def capacity(self) -> int:
        return self._loader._capacity


class PyReader:
    """``fluid.io.PyReader``: the Fluid 1.5 name for a generator loader."""

    def __init__(
        self,
        feed_list: Sequence | None = None,
        capacity: int | None = None,
        use_double_buffer: bool = True,
        iterable: bool = True,
        return_list: bool = False,
    ) -> None:
        self._loader = GeneratorLoader(
            feed_list,
            capacity,
            use_double_buffer,
            iterable,
            return_list,
            drop_last=True,
            _what="PyReader",
        )
        self._iterable = iterable

    @property
    def iterable(self) -> bool:
        return self._iterable

    def __call__(self):
        return self._loader()

    def __iter__(self):
        return iter(self._loader)

    def start(self) -> None:
        self._loader.start()

    def reset(self) -> None:
        self._loader.reset()

    def next(self) -> Any:
        """The next batch of an iterable reader (Fluid 1.8's ``PyReader.next()``)."""
        if getattr(self, "_iter", None) is None:
            self._iter = iter(self._loader)
        try:
            return next(self._iter)
        except StopIteration:
            self._iter = None
            raise

    __next__ = next

    @property
    def queue(self) -> Any:
        """The batches ready for the program (``size()``, ``capacity()``) of the running epoch."""
        return _QueueView(self._loader)

    def decorate_sample_generator(
        self,
        sample_generator: Callable,
        batch_size: int,
        drop_last: bool = True,
        places: Any = None,
    ) -> None:
        """Samples ``(img, label)``, batched by ``batch_size`` (the short last batch dropped by default)."""
        self._loader.set_sample_generator(sample_generator, batch_size, drop_last, places)

    def decorate_sample_list_generator(self, reader: Callable, places: Any = None) -> None:
        """Lists of sample tuples, e.g. ``oar.batch(reader, n)``."""
        self._loader.set_sample_list_generator(reader, places)

    def decorate_batch_generator(self, reader: Callable, places: Any = None) -> None:
        """Batches ``[batched_imgs, batched_labels]`` of arrays or LoDTensors."""
        self._loader.set_batch_generator(reader, places)

    # Fluid 1.5 names
    decorate_paddle_reader = decorate_sample_list_generator
    decorate_tensor_provider = decorate_batch_generator
