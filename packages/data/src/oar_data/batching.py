"""``oar.batch``: turn a sample reader into a batch reader."""

from __future__ import annotations

from collections.abc import Callable, Iterable


def batch(reader: Callable[[], Iterable], batch_size: int, drop_last: bool = False) -> Callable:
    """A reader yielding lists of ``batch_size`` samples; the last shorter list unless ``drop_last``."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f"batch: batch_size should be a positive integer, given {batch_size!r}")
    if not callable(reader):
        raise TypeError(
            f"batch: reader must be a zero-argument callable, given {type(reader).__name__}"
        )

    def batch_reader():
        from oar.api import maybe_progress

        b = []
        for sample in maybe_progress(reader(), desc=f"batch({batch_size})"):
            b.append(sample)
            if len(b) == batch_size:
                yield b
                b = []
        if b and not drop_last:
            yield b

    return batch_reader
