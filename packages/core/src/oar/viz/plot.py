"""One call from logged scalars to a PNG of their curves (matplotlib, headless)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oar.viz._optional import require


def plot_scalars(
    source: Any,
    path: str | Path,
    tags: list | None = None,
    title: str | None = None,
    size: tuple = (8.0, 4.5),
    dpi: int = 100,
) -> Path:
    """Plot scalar series to ``path`` (PNG), one subplot per tag.

    ``source`` is a log directory (event files written by :class:`LogWriter`) or a mapping
    ``{tag: [(step, value), ...]}`` or ``{tag: [value, ...]}`` (steps 0, 1, ...).
    """
    matplotlib = require("matplotlib", "plot_scalars")
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    if isinstance(source, (str, Path)):
        from oar.viz.event_reader import read_scalars

        series = read_scalars(source)
    else:
        series = dict(source)
    chosen = tags or sorted(series)
    missing = [t for t in chosen if t not in series]
    if missing or not chosen:
        raise ValueError(
            f"plot_scalars: no scalars for tags {missing or chosen}; available: {sorted(series)}"
        )
    fig, axes = plt.subplots(len(chosen), 1, figsize=size, dpi=dpi, squeeze=False)
    try:
        for ax, tag in zip(axes[:, 0], chosen):
            points = list(series[tag])
            if points and not isinstance(points[0], (tuple, list)):
                points = list(enumerate(points))
            ax.plot([p[0] for p in points], [float(p[1]) for p in points])
            ax.set_ylabel(tag)
            ax.grid(True, alpha=0.3)
        axes[-1, 0].set_xlabel("step")
        if title:
            fig.suptitle(title)
        fig.tight_layout()
        path = Path(path)
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)
    return path
