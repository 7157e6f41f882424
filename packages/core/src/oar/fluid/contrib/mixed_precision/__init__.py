"""``fluid.contrib.mixed_precision``: loss-scaled training (``decorate``) and the op lists."""

from oar.fluid.contrib.mixed_precision import decorator, fp16_lists, fp16_utils
from oar.fluid.contrib.mixed_precision.decorator import OptimizerWithMixedPrecision, decorate
from oar.fluid.contrib.mixed_precision.fp16_lists import AutoMixedPrecisionLists

__all__ = [
    "decorate",
    "AutoMixedPrecisionLists",
    "OptimizerWithMixedPrecision",
    "decorator",
    "fp16_lists",
    "fp16_utils",
]
