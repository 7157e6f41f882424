"""``fluid.io``: save/load (from oar-io) and readers (from oar-data), found through plugins."""

from oar._facade import module_dir, module_getattr

__getattr__ = module_getattr("io.")
__dir__ = module_dir("io.", __name__)
