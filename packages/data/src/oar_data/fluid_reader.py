"""``fluid.reader``: the module Fluid 1.8 keeps its loaders in."""

from oar_data.loader import DataLoader, GeneratorLoader, PyReader
from oar_data.map_loader import default_collate_fn

__all__ = ["DataLoader", "GeneratorLoader", "PyReader", "default_collate_fn"]
