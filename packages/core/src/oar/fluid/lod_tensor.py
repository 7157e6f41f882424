"""``fluid.lod_tensor``: Fluid's module path for the LoDTensor constructors."""

from oar.lod_tensor import create_lod_tensor, create_random_int_lodtensor

__all__ = ["create_lod_tensor", "create_random_int_lodtensor"]
