"""oar-io: the save/load plugin for oar (Fluid's ``fluid.io`` save/load API and more).

The plugin entry point is :mod:`oar_io.plugin`. ``oar`` is imported first so
that importing an ``oar_io`` module directly sets the plugin manager up
before any of this package's modules are half-initialised.
"""

import oar  # noqa: F401

__version__ = "0.1.0"
