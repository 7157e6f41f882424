"""Handing a case back to the kernel this plugin overrides."""

from __future__ import annotations

import numpy as np
from oar.api import registries


class Fallback:
    """Calls the best kernel below ``priority`` for ``op_type`` (resolved per dtype, once)."""

    def __init__(self, op_type: str, device: str, priority: int) -> None:
        self.op_type, self.device, self.priority = op_type, device, priority
        self._cache: dict = {}

    def __call__(self, dtype, inputs: dict, attrs: dict, *extra, donated=frozenset()):
        """``dtype``: a numpy dtype or its name (the dtype that selected the kernel)."""
        entry = self._cache.get(dtype)
        if entry is None:
            name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
            entry = registries().kernels.lookup_below(
                self.op_type, self.device, name, self.priority
            )
            if entry is None:
                raise RuntimeError(f"{self.op_type}: no kernel below oar-kernels-numba's")
            self._cache[dtype] = entry
        if entry.inplace:
            return entry.kernel(inputs, attrs, *extra, donated=donated)
        return entry.kernel(inputs, attrs, *extra)
