"""``fluid.reader``: the module Fluid 1.8 keeps its loaders in."""

from oar_data.loader import DataLoader, GeneratorLoader, PyReader

__all__ = ["DataLoader", "GeneratorLoader", "PyReader"]
