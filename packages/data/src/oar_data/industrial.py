"""``fluid.DatasetFactory`` datasets and ``Executor.train_from_dataset`` (the industrial path).

A dataset reads MultiSlot text files (one sample per line; per ``set_use_var``
variable, a count then that many values: see ``fluid.incubate.data_generator``),
optionally through ``set_pipe_command`` (each file is piped through the shell
command, as Fluid does), and cuts them into batches of ``set_batch_size``.
``InMemoryDataset`` loads everything first (``load_into_memory``) and can
shuffle; ``QueueDataset`` streams the files. ``train_from_dataset`` runs the
program over the batches in ``thread`` threads (each thread its share of the
files or records, one Executor each, one shared scope: Hogwild-style updates, as
Fluid does on CPU).
"""

from __future__ import annotations

import random
import subprocess
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from oar.api import LoDTensor

__all__ = ["DatasetFactory", "InMemoryDataset", "QueueDataset"]

PIPE_TIMEOUT_S = 600


class DatasetFactory:
    """``fluid.DatasetFactory().create_dataset("InMemoryDataset" | "QueueDataset")``."""

    def create_dataset(self, datafeed_class: str = "QueueDataset") -> DatasetBase:
        classes = {"InMemoryDataset": InMemoryDataset, "QueueDataset": QueueDataset}
        if datafeed_class not in classes:
            raise ValueError(
                f"DatasetFactory.create_dataset: unknown dataset class {datafeed_class!r}; "
                f"oar provides {sorted(classes)}"
            )
        return classes[datafeed_class]()


class DatasetBase:
    def __init__(self) -> None:
        self.filelist: list = []
        self.use_vars: list = []
        self.batch_size = 1
        self.thread_num = 1
        self.pipe_command = "cat"
        self.drop_last = False

    # --- configuration (Fluid's setters) ---------------------------------------------------------
    def set_use_var(self, var_list: Sequence) -> None:
        if not var_list:
            raise ValueError("set_use_var: give the data variables the samples fill, in slot order")
        for v in var_list:
            if str(getattr(v, "dtype", "")).split(".")[-1].lower() not in (
                "int64",
                "float32",
                "int32",
                "float64",
            ):
                raise ValueError(
                    f"set_use_var: variable {getattr(v, 'name', v)!r} has dtype {v.dtype}; "
                    f"MultiSlot slots are int64 or float32"
                )
        self.use_vars = list(var_list)

    def set_batch_size(self, batch_size: int) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"set_batch_size: a positive int, given {batch_size!r}")
        self.batch_size = batch_size

    def set_thread(self, thread_num: int) -> None:
        if isinstance(thread_num, bool) or not isinstance(thread_num, int) or thread_num <= 0:
            raise ValueError(f"set_thread: a positive int, given {thread_num!r}")
        self.thread_num = thread_num

    def set_filelist(self, filelist: Sequence) -> None:
        self.filelist = [str(f) for f in filelist]

    def set_pipe_command(self, pipe_command: str) -> None:
        self.pipe_command = pipe_command

    def set_hdfs_config(self, fs_name: str, fs_ugi: str) -> None:
        raise NotImplementedError(
            "set_hdfs_config: oar reads local files; copy or mount the HDFS files first"
        )

    def desc(self) -> str:
        return (
            f"{type(self).__name__}(batch_size={self.batch_size}, thread_num={self.thread_num}, "
            f"pipe_command={self.pipe_command!r}, use_var={[v.name for v in self.use_vars]}, "
            f"filelist={self.filelist})"
        )

    # --- parsing ---------------------------------------------------------------------------------
    def _lines(self, path: str) -> Iterator[str]:
        if self.pipe_command.strip() == "cat":
            with open(path) as f:
                yield from f
            return
        with open(path, "rb") as f:
            proc = subprocess.run(
                self.pipe_command,
                shell=True,
                stdin=f,
                capture_output=True,
                timeout=PIPE_TIMEOUT_S,
                check=False,
            )
        if proc.returncode != 0:
            raise RuntimeError(
                f"{type(self).__name__}: pipe command {self.pipe_command!r} failed on {path} "
                f"(exit {proc.returncode}): {proc.stderr.decode(errors='replace')[-2000:]}"
            )
        yield from proc.stdout.decode().splitlines()

    def _parse(self, line: str, where: str) -> list | None:
        tokens = line.split()
        if not tokens:
            return None
        sample, pos = [], 0
        for var in self.use_vars:
            try:
                n = int(tokens[pos])
                values = tokens[pos + 1 : pos + 1 + n]
            except (IndexError, ValueError):
                raise ValueError(
                    f"{where}: cannot read slot {var.name!r} from {line.strip()!r}"
                ) from None
            if n <= 0 or len(values) != n:
                raise ValueError(
                    f"{where}: slot {var.name!r} announces {tokens[pos]} values, "
                    f"the line has {len(values)} left: {line.strip()!r}"
                )
            sample.append(values)
            pos += 1 + n
        if pos != len(tokens):
            raise ValueError(
                f"{where}: {len(tokens) - pos} values left over after the {len(self.use_vars)} "
                f"slots of set_use_var: {line.strip()!r}"
            )
        return sample

    def _records(self, path: str) -> Iterator[list]:
        for i, line in enumerate(self._lines(path)):
            sample = self._parse(line, f"{path}:{i + 1}")
            if sample is not None:
                yield sample

    def _batch(self, samples: list) -> list:
        """One value per use_var: a dense [B, n] array, or a LoDTensor for lod_level >= 1."""
        out = []
        for j, var in enumerate(self.use_vars):
            dtype = "int64" if "int" in str(var.dtype).lower() else "float32"
            columns = [
                np.asarray(s[j], dtype=np.float64 if dtype == "float32" else np.int64)
                for s in samples
            ]
            if getattr(var, "lod_level", 0):
                t = LoDTensor()
                t.set(np.concatenate(columns).astype(dtype).reshape(-1, 1))
                t.set_recursive_sequence_lengths([[len(c) for c in columns]])
                out.append(t)
            else:
                widths = {len(c) for c in columns}
                if len(widths) != 1:
                    raise ValueError(
                        f"{type(self).__name__}: dense slot {var.name!r} (lod_level 0) has samples of "
                        f"lengths {sorted(widths)}; give it lod_level=1 for variable lengths"
                    )
                arr = np.stack(columns).astype(dtype)
                shape = [d for d in var.shape]
                if len(shape) > 2 and all(d > 0 for d in shape[1:]):
                    arr = arr.reshape([len(samples), *shape[1:]])
                out.append(arr)
        return out

    def _batches_of(self, records: Iterator[list]) -> Iterator[list]:
        buf: list = []
        for r in records:
            buf.append(r)
            if len(buf) == self.batch_size:
                yield self._batch(buf)
                buf = []
        if buf and not self.drop_last:
            yield self._batch(buf)

    def _check_ready(self) -> None:
        if not self.use_vars:
            raise ValueError(f"{type(self).__name__}: call set_use_var first")

    def _shards(self, n: int) -> list:
        """``n`` iterables of batches, one per thread."""
        raise NotImplementedError

    def _all_batches(self) -> Iterator[list]:
        for shard in self._shards(1):
            yield from shard

    # --- the run loop behind Executor.train_from_dataset / infer_from_dataset ----------------------
    def _run_with(
        self,
        executor: Any,
        program: Any,
        scope: Any,
        thread: int,
        debug: bool,
        fetch_list: Sequence | None,
        fetch_info: Sequence | None,
        print_period: int,
        fetch_handler: Any,
    ) -> None:
        from oar.api import global_scope

        self._check_ready()
        scope = scope if scope is not None else global_scope()
        threads = thread if thread > 0 else self.thread_num
        fetch_list = list(fetch_list or [])
        fetch_info = list(fetch_info or [getattr(v, "name", str(v)) for v in fetch_list])
        if len(fetch_info) != len(fetch_list):
            raise ValueError("train_from_dataset: fetch_info needs one label per fetch_list entry")
        names = [v.name for v in self.use_vars]
        errors: list = []
        place = executor.place
        exe_cls = type(executor)

        def work(tid: int, batches: Any) -> None:
            exe = executor if tid == 0 else exe_cls(place)
            if tid == 0:  # OAR_PROGRESS=1: a bar over thread 0's batches, with its last loss
                from oar.api import maybe_progress

                batches = maybe_progress(batches, desc="train_from_dataset (thread 0)")
            bar = batches if hasattr(batches, "set_loss") else None
            try:
                for step, batch in enumerate(batches):
                    feed = dict(zip(names, batch, strict=True))
                    values = exe.run(program, feed=feed, fetch_list=fetch_list, scope=scope)
                    if bar is not None and values:
                        bar.set_loss(values[0])
                    if fetch_list and tid == 0 and (step + 1) % max(1, print_period) == 0:
                        print(
                            " ".join(
                                f"{info}: {np.asarray(v).ravel()[:8]}"
                                for info, v in zip(fetch_info, values)
                            ),
                            flush=True,
                        )
                    if debug and tid == 0:
                        print(f"thread {tid} step {step}", flush=True)
            except BaseException as exc:  # reported in the caller's thread
                errors.append(exc)

        shards = self._shards(threads)
        workers = [
            threading.Thread(target=work, args=(i, s), daemon=True) for i, s in enumerate(shards)
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        if errors:
            raise errors[0]


class QueueDataset(DatasetBase):
    """Streams the files: each thread reads its share (file i goes to thread i % threads)."""

    def _shards(self, n: int) -> list:
        self._check_ready()
        files = list(self.filelist)
        return [
            self._batches_of(r for f in files[i::n] for r in self._records(f)) for i in range(n)
        ]

    def local_shuffle(self) -> None:
        raise NotImplementedError(
            "QueueDataset does not support local shuffle; use InMemoryDataset"
        )

    def global_shuffle(self, fleet: Any = None) -> None:
        raise NotImplementedError(
            "QueueDataset does not support global shuffle; use InMemoryDataset"
        )


class InMemoryDataset(DatasetBase):
    """Loads every record first; shuffles them; threads take every n-th record."""

    def __init__(self) -> None:
        super().__init__()
        self._memory: list | None = None
        self._preload: threading.Thread | None = None

    def load_into_memory(self) -> None:
        self._check_ready()
        records: list = []
        for f in self.filelist:
            records.extend(self._records(f))
        self._memory = records

    def preload_into_memory(self, thread_num: int | None = None) -> None:
        self._preload = threading.Thread(target=self.load_into_memory, daemon=True)
        self._preload.start()

    def wait_preload_done(self) -> None:
        if self._preload is not None:
            self._preload.join()
            self._preload = None

    def local_shuffle(self) -> None:
        self._loaded("local_shuffle")
        random.shuffle(self._memory)  # type: ignore[arg-type]

    def global_shuffle(self, fleet: Any = None, thread_num: int = 12) -> None:
        """Shuffle the records across the trainers of ``fleet`` (each record goes to a random
        trainer, through the dist plugin's communicator), then locally; without a fleet, or
        with one trainer, a local shuffle."""
        self._loaded("global_shuffle")
        workers = _worker_num(fleet)
        if workers > 1:
            exchange = getattr(getattr(fleet, "_role_maker", None), "_all_to_all", None)
            if exchange is None:
                raise NotImplementedError(
                    f"InMemoryDataset.global_shuffle: {type(fleet).__name__} cannot exchange "
                    f"records between trainers; pass the fleet of the dist plugin (oar-dist)"
                )
            buckets: list = [[] for _ in range(workers)]
            for record in self._memory:  # type: ignore[union-attr]
                buckets[random.randrange(workers)].append(record)
            self._memory = exchange(buckets)
        random.shuffle(self._memory)  # type: ignore[arg-type]

    def release_memory(self) -> None:
        self._memory = None

    def get_memory_data_size(self, fleet: Any = None) -> int:
        """The number of records loaded: on every trainer of ``fleet`` together, if given."""
        return _global_count(fleet, len(self._memory or []))

    def get_shuffle_data_size(self, fleet: Any = None) -> int:
        """The number of records after the shuffle (every trainer's, with ``fleet``)."""
        return _global_count(fleet, len(self._memory or []))

    def _loaded(self, what: str) -> None:
        if self._memory is None:
            raise RuntimeError(f"InMemoryDataset.{what}: call load_into_memory() first")

    def _shards(self, n: int) -> list:
        self._loaded("train_from_dataset")
        memory = self._memory
        return [self._batches_of(iter(memory[i::n])) for i in range(n)]  # type: ignore[index]


def _worker_num(fleet: Any) -> int:
    return int(fleet.worker_num()) if fleet is not None and hasattr(fleet, "worker_num") else 1


def _global_count(fleet: Any, local: int) -> int:
    if _worker_num(fleet) <= 1:
        return local
    out = np.zeros(1, np.int64)
    fleet._role_maker.all_reduce_worker(np.array([local], np.int64), out, "sum")
    return int(out[0])
