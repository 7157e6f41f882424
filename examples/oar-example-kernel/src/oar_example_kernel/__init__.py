"""A third-party oar kernel plugin: the CPU ``relu`` at priority 100, counting its calls.

The built-in numpy kernel has priority 0, so once this distribution is
installed every ``relu`` on the CPU (static graph and dygraph) runs here.
"""

import numpy as np
from oar.api import hookimpl

CALLS = {"relu": 0}


def relu(inputs, attrs):
    """The kernel contract: ``{input slot: array}, {attr: value} -> {output slot: array}``."""
    CALLS["relu"] += 1
    return {"Out": np.maximum(inputs["X"], 0)}


@hookimpl
def oar_register_kernels(registry):
    registry.register_kernel("relu", "cpu", ("float32", "float64"), relu, priority=100)
