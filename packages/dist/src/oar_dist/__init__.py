"""oar-dist: data parallel, collective communication and distributed training for oar."""

from __future__ import annotations

__version__ = "0.1.0"

# oar first: importing it loads every plugin, this one included, so a first import of one of
# this package's modules must not leave them half-initialised while the plugin manager
# imports them.
import oar  # noqa: F401
