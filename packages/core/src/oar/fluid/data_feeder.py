"""``fluid.data_feeder``: Fluid's module path for ``DataFeeder`` (provided by oar-data)."""

from oar._facade import module_getattr

__all__ = ["DataFeeder"]  # noqa: F822 - provided by oar-data through __getattr__

__getattr__ = module_getattr("")
