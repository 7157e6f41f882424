"""oar CPU kernels compiled with numba, registered over oar-kernels-cpu's at a higher priority.

Importing this package is cheap: numba itself is imported the first time a program
uses an op family this plugin covers (``oar_kernels_numba.plugin`` registers the
families lazily). Functions are compiled on first call and cached on disk
(``cache=True``: next to this package in ``__pycache__``, or under
``NUMBA_CACHE_DIR``), so a second process starts warm. Each kernel handles the
common cases (float32/float64, contiguous arrays) and hands every other case to
the kernel it overrides, so results are those of the numpy kernels within float
tolerance (bit for bit for the optimizer updates and relu).
"""

from __future__ import annotations

__version__ = "0.1.0"

# oar first: importing it loads every plugin, this one included, so a first import of one of
# this package's modules must not leave them half-initialised while the plugin manager
# imports them.
import oar  # noqa: F401

__all__ = ["__version__"]
