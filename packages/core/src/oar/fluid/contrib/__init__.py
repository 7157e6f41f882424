"""``fluid.contrib``: extras provided by plugins (e.g. ``contrib.reader`` from oar-data)."""

from oar._facade import module_getattr

__getattr__ = module_getattr("contrib.")
