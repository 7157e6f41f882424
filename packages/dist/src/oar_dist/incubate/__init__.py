"""``fluid.incubate``: Fluid 1.8's incubating APIs that oar-dist provides (the collective fleet)."""

from oar_dist.incubate._lazy import lazy_submodules

__getattr__ = lazy_submodules(__name__)
