"""oar-io: the save/load plugin for oar (Fluid's ``fluid.io`` save/load API and more).

Importing this package does not touch ``oar``; the plugin entry point is
:mod:`oar_io.plugin`.
"""

__version__ = "0.1.0"
