"""``fluid.incubate.fleet``: the fleet API; ``fleet.collective`` for collective training."""

from oar_dist.incubate._lazy import lazy_submodules

__getattr__ = lazy_submodules(__name__)
