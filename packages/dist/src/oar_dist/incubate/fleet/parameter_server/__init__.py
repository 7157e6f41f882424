"""``fluid.incubate.fleet.parameter_server``: fleet over parameter servers."""

from oar_dist.incubate._lazy import lazy_submodules

__getattr__ = lazy_submodules(__name__)
