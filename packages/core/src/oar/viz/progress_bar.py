"""Optional tqdm progress bars over readers and loaders: batches, samples/s and the last loss.

Off by default. Turn on per loop with ``progress(reader)`` or, for every loop that calls
:func:`maybe_progress`, with ``OAR_PROGRESS=1``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from oar.viz._optional import require

ENV_PROGRESS = "OAR_PROGRESS"


def _batch_size(batch: Any) -> int:
    """Samples in a batch: a list of samples (oar.batch), a dict/list of arrays (DataLoader)."""
    if isinstance(batch, dict):
        batch = next(iter(batch.values()), None)
    if isinstance(batch, (list, tuple)) and batch and isinstance(batch[0], (list, tuple)):
        return len(batch)  # a list of sample tuples
    if isinstance(batch, (list, tuple)) and batch:
        batch = batch[0]
    shape = getattr(batch, "shape", None)
    return int(shape[0]) if shape else 1


class progress:
    """Wrap ``iterable`` (a reader creator's output, a DataLoader, a PyReader) in a tqdm bar.

    ``bar.set_loss(value)`` shows the last fetched loss; the postfix also shows samples/s.
    """

    def __init__(
        self,
        iterable: Iterable,
        total: int | None = None,
        desc: str | None = None,
        file: Any = None,
        **tqdm_kwargs: Any,
    ) -> None:
        tqdm = require("tqdm", "progress bars").tqdm
        if total is None and hasattr(iterable, "__len__"):
            try:
                total = len(iterable)  # type: ignore[arg-type]
            except TypeError:
                total = None
        self._iterable = iterable
        self._bar = tqdm(total=total, desc=desc, file=file, unit="batch", **tqdm_kwargs)
        self._it: Iterator | None = None
        self._loss: float | None = None
        self._samples = 0
        self._start = time.perf_counter()

    def set_loss(self, value: Any) -> None:
        self._loss = float(np.asarray(value).reshape(-1)[0])

    def __iter__(self) -> Iterator:
        return self

    def __next__(self) -> Any:
        if self._it is None:
            self._it = iter(self._iterable)
        try:
            batch = next(self._it)
        except BaseException:  # the end of the epoch, an error, or Ctrl-C: close the bar
            self.close()
            raise
        self._samples += _batch_size(batch)
        rate = self._samples / max(time.perf_counter() - self._start, 1e-9)
        post = {"samples/s": f"{rate:.1f}"}
        if self._loss is not None:
            post["loss"] = f"{self._loss:.4g}"
        self._bar.set_postfix(post, refresh=False)
        self._bar.update(1)
        return batch

    def close(self) -> None:
        """Close the bar and the wrapped iterator (a loader's epoch stops its threads)."""
        self._bar.close()
        close = getattr(self._it, "close", None)
        if close is not None:
            close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def maybe_progress(iterable: Iterable, desc: str | None = None) -> Iterable:
    """``iterable`` with a progress bar when ``OAR_PROGRESS=1`` (and tqdm is installed)."""
    if os.environ.get(ENV_PROGRESS, "") in ("", "0"):
        return iterable
    return progress(iterable, desc=desc)
