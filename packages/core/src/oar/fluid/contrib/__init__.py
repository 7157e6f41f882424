"""``fluid.contrib``: extras provided by plugins (e.g. ``contrib.reader`` from oar-data)."""

from oar._facade import module_getattr
from oar.optimizer.decoupled import extend_with_decoupled_weight_decay

__getattr__ = module_getattr("contrib.")

__all__ = ["extend_with_decoupled_weight_decay"]
