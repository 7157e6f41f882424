"""Watching training: VisualDL-style scalar logs (TensorBoard event files), PNG plots, Graphviz
views of programs, model summaries and progress bars.

Each needs an optional library (tensorboardX, matplotlib, graphviz, tqdm), imported only when
used: ``pip install "oar-core[viz]"`` installs them all. Core never depends on them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "LogWriter": "oar.viz.log_writer",
    "read_scalars": "oar.viz.event_reader",
    "plot_scalars": "oar.viz.plot",
    "program_to_dot": "oar.viz.graph",
    "draw_block_graphviz": "oar.viz.graph",
    "summary": "oar.viz.model_summary",
    "progress": "oar.viz.progress_bar",
}

if TYPE_CHECKING:
    from oar.viz.event_reader import read_scalars
    from oar.viz.graph import draw_block_graphviz, program_to_dot
    from oar.viz.log_writer import LogWriter
    from oar.viz.model_summary import summary
    from oar.viz.plot import plot_scalars
    from oar.viz.progress_bar import progress

__all__ = [
    "LogWriter",
    "draw_block_graphviz",
    "plot_scalars",
    "program_to_dot",
    "progress",
    "read_scalars",
    "summary",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'oar.viz' has no attribute '{name}'")
    import importlib

    return getattr(importlib.import_module(module), name)
