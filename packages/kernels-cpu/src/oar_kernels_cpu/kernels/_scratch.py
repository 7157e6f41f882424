"""Reusable scratch buffers for kernel temporaries: core's (``oar.api.scratch``), under the
names this package's kernels use."""

from __future__ import annotations

from oar.api import release_scratch as release
from oar.api import scratch, scratch_bytes

__all__ = ["release", "scratch", "scratch_bytes"]
