"""oar-dist: data parallel, collective communication and distributed training for oar."""

from __future__ import annotations

__version__ = "0.1.0"
