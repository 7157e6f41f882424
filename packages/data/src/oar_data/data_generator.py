"""``fluid.incubate.data_generator``: turn raw lines into the MultiSlot text a Dataset reads.

Subclass :class:`MultiSlotDataGenerator`, define ``generate_sample(line)``
returning a generator function that yields samples ``[(slot name, [values]), ...]``,
and run it as the Dataset's pipe command (``run_from_stdin``) or in memory
(``run_from_memory``). Each sample becomes one line: per slot, the number of
values then the values (``"3 1.5 2.0 3.0 1 1"``), as Fluid 1.8.5 writes it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["MultiSlotDataGenerator", "MultiSlotStringDataGenerator"]


class DataGenerator:
    """The base: ``generate_sample`` per line, optional ``generate_batch`` over a batch."""

    def __init__(self) -> None:
        self._proto_info: list | None = None
        self.batch_size_ = 32
        self._line_limit = 0

    def set_batch(self, batch_size: int) -> None:
        self.batch_size_ = batch_size

    def _set_line_limit(self, line_limit: int) -> None:
        self._line_limit = line_limit

    def generate_sample(self, line: Any) -> Callable:
        raise NotImplementedError(
            "define generate_sample(line) returning a function that yields "
            "[(slot_name, [values...]), ...] per sample"
        )

    def generate_batch(self, samples: list) -> Callable:
        def local_iter():
            yield from samples

        return local_iter

    def _lines(self, lines: Iterable) -> Iterable[str]:
        batch: list = []
        for i, line in enumerate(lines):
            if self._line_limit and i >= self._line_limit:
                break
            for sample in self.generate_sample(line)():
                if sample is None:
                    continue
                batch.append(sample)
                if len(batch) == self.batch_size_:
                    yield from self._flush(batch)
                    batch = []
        if batch:
            yield from self._flush(batch)

    def _flush(self, batch: list) -> Iterable[str]:
        for sample in self.generate_batch(batch)():
            yield self._gen_str(sample)

    def run_from_stdin(self) -> None:
        """Read lines from stdin, write one MultiSlot line per sample to stdout."""
        out = sys.stdout
        for text in self._lines(sys.stdin):
            out.write(text)

    def run_from_memory(self) -> list:
        """The MultiSlot lines of ``generate_sample(None)``'s samples (no stdin)."""
        return list(self._lines([None]))

    def _gen_str(self, line: Any) -> str:
        raise NotImplementedError


def _check_sample(sample: Any, cls: str) -> list:
    if not isinstance(sample, (list, tuple)) or not sample:
        raise ValueError(
            f"{cls}: a sample must be a non-empty list of (name, values), given {sample!r}"
        )
    for item in sample:
        if not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[0], str):
            raise ValueError(f"{cls}: each slot must be a (name, [values]) pair, given {item!r}")
        if not isinstance(item[1], (list, tuple)) or not item[1]:
            raise ValueError(f"{cls}: slot {item[0]!r} must have a non-empty list of values")
    return list(sample)


class MultiSlotDataGenerator(DataGenerator):
    """Samples of int or float slots, written as ``count v1 v2 ...`` per slot."""

    def _gen_str(self, line: Any) -> str:
        sample = _check_sample(line, "MultiSlotDataGenerator")
        names = [name for name, _ in sample]
        if self._proto_info is None:
            self._proto_info = names
        elif names != self._proto_info:
            raise ValueError(
                f"MultiSlotDataGenerator: every sample must have the slots {self._proto_info}, "
                f"given {names}"
            )
        parts = []
        for name, values in sample:
            for v in values:
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise ValueError(
                        f"MultiSlotDataGenerator: slot {name!r} holds {v!r}; values must be int or float"
                    )
            parts.append(str(len(values)))
            parts.extend(str(v) for v in values)
        return " ".join(parts) + "\n"


class MultiSlotStringDataGenerator(DataGenerator):
    """Samples of string slots (already tokenised), written as ``count s1 s2 ...``."""

    def _gen_str(self, line: Any) -> str:
        sample = _check_sample(line, "MultiSlotStringDataGenerator")
        parts = []
        for _name, values in sample:
            parts.append(str(len(values)))
            parts.extend(str(v) for v in values)
        return " ".join(parts) + "\n"
