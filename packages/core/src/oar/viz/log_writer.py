"""``LogWriter``: VisualDL 2.x's writer API over tensorboardX, so scalar curves, histograms,
images and text land in TensorBoard event files (readable by TensorBoard and VisualDL 2.x)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from oar.viz._optional import require


def _scalar(value: Any, tag: str) -> float:
    """A Python float from a number, a 0-d or 1-element array (``loss.numpy()``), or a VarBase."""
    if hasattr(value, "numpy"):
        value = value.numpy()
    arr = np.asarray(value)
    if arr.size != 1:
        raise ValueError(
            f"LogWriter.add_scalar('{tag}'): value must hold one number, given shape {arr.shape}"
        )
    return float(arr.reshape(()))


class LogWriter:
    """VisualDL 2.x ``LogWriter(logdir, ...)``; use as a context manager or call :meth:`close`."""

    def __init__(
        self,
        logdir: str | None = None,
        comment: str = "",
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
        write_to_disk: bool = True,
        display_name: str = "",
        file_name: str = "",
        **kwargs: Any,
    ) -> None:
        tbx = require("tensorboardX", "LogWriter")
        self.logdir = logdir
        self._writer = tbx.SummaryWriter(
            logdir=logdir,
            comment=comment,
            max_queue=max_queue,
            flush_secs=flush_secs,
            filename_suffix=filename_suffix,
            write_to_disk=write_to_disk,
        )
        self.logdir = self._writer.logdir

    def add_scalar(self, tag: str, value: Any, step: int, walltime: float | None = None) -> None:
        self._writer.add_scalar(tag, _scalar(value, tag), int(step), walltime or time.time())

    def add_histogram(
        self, tag: str, values: Any, step: int, walltime: float | None = None, buckets: int = 10
    ) -> None:
        data = np.asarray(values.numpy() if hasattr(values, "numpy") else values, dtype="float64")
        self._writer.add_histogram(
            tag, data.ravel(), int(step), bins=int(buckets), walltime=walltime or time.time()
        )

    def add_image(
        self,
        tag: str,
        img: Any,
        step: int,
        walltime: float | None = None,
        dataformats: str = "HWC",
    ) -> None:
        """``img``: uint8 in [0, 255] or float in [0, 1], laid out as ``dataformats`` says."""
        arr = np.asarray(img)
        if arr.ndim != len(dataformats):
            raise ValueError(
                f"LogWriter.add_image('{tag}'): dataformats '{dataformats}' needs a "
                f"{len(dataformats)}-D image, given shape {arr.shape}"
            )
        self._writer.add_image(
            tag, arr, int(step), walltime=walltime or time.time(), dataformats=dataformats
        )

    def add_text(
        self, tag: str, text_string: str, step: int | None = None, walltime: float | None = None
    ) -> None:
        self._writer.add_text(tag, str(text_string), step, walltime=walltime or time.time())

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
