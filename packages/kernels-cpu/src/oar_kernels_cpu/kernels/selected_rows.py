"""numpy kernels for merge_selected_rows and get_tensor_from_selected_rows."""

from __future__ import annotations

from oar.api import SelectedRows

from oar_kernels_cpu.kernels import array_module, kernel
from oar_kernels_cpu.kernels._util import merge_rows

xp = array_module(__name__)


def _as_rows(x) -> SelectedRows:
    """A dense X is treated as the SelectedRows holding every row once."""
    if isinstance(x, SelectedRows):
        return x
    x = xp.asarray(x)
    return SelectedRows(range(x.shape[0]), x.shape[0], x)


@kernel("merge_selected_rows", selected_rows=True)
def merge_selected_rows(inputs, attrs):
    if not isinstance(inputs["X"], SelectedRows):
        return {"Out": xp.asarray(inputs["X"]).copy()}  # dense rows are already merged
    x = inputs["X"]
    rows, merged = merge_rows(xp, x)
    return {"Out": SelectedRows(rows, x.height(), merged)}


@kernel("get_tensor_from_selected_rows", selected_rows=True)
def get_tensor_from_selected_rows(inputs, attrs):
    x = _as_rows(inputs["X"])
    return {"Out": xp.asarray(x.value).copy()}
