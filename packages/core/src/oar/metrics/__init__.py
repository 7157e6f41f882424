"""``fluid.metrics``: host-side accumulators fed with the numbers a program fetched.

Each metric keeps plain Python/numpy state between ``update`` calls; ``eval``
gives the value so far and ``reset`` starts again. ``DetectionMAP`` (which
builds ops in the program) lives in its own module next to these.
"""

from __future__ import annotations

from oar.metrics.base import (
    Accuracy,
    Auc,
    ChunkEvaluator,
    CompositeMetric,
    EditDistance,
    MetricBase,
    Precision,
    Recall,
)
from oar.metrics.detection_map import DetectionMAP

__all__ = [
    "MetricBase",
    "CompositeMetric",
    "Precision",
    "Recall",
    "Accuracy",
    "ChunkEvaluator",
    "EditDistance",
    "Auc",
    "DetectionMAP",
]
