"""numpy kernels for merge_selected_rows and get_tensor_from_selected_rows."""

from __future__ import annotations

import numpy as np
from oar.lod_tensor import SelectedRows

from oar_kernels_cpu.kernels import kernel


def _as_rows(x) -> SelectedRows:
    """A dense X is treated as the SelectedRows holding every row once."""
    if isinstance(x, SelectedRows):
        return x
    x = np.asarray(x)
    return SelectedRows(np.arange(x.shape[0]), x.shape[0], x)


@kernel("merge_selected_rows", selected_rows=True)
def merge_selected_rows(inputs, attrs):
    if not isinstance(inputs["X"], SelectedRows):
        return {"Out": np.asarray(inputs["X"]).copy()}  # dense rows are already merged
    x = inputs["X"]
    rows, inv = np.unique(x.row_array, return_inverse=True)
    v = np.asarray(x.value)
    merged = np.zeros((len(rows),) + v.shape[1:], dtype=v.dtype)
    np.add.at(merged, inv, v)
    return {"Out": SelectedRows(rows, x.height(), merged)}


@kernel("get_tensor_from_selected_rows", selected_rows=True)
def get_tensor_from_selected_rows(inputs, attrs):
    x = _as_rows(inputs["X"])
    return {"Out": np.asarray(x.value).copy()}
