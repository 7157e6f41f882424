"""squared_l2_norm against numpy with its gradient; a SelectedRows input is merged before squaring."""

import numpy as np
import pytest
from oar.lod_tensor import SelectedRows
from oar.testing import OpCase, check_case

rng = np.random.default_rng(8)

CASES = [
    OpCase(
        "squared_l2_norm",
        {"X": rng.uniform(-1, 1, (3, 4))},
        ref=lambda X: {"Out": np.array([np.sum(X * X)])},
        grad=["X"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_squared_l2_norm(case):
    check_case(case)


def test_selected_rows_rows_merge_first():
    from oar_kernels_cpu.kernels import kernels_for

    k = kernels_for("squared_l2_norm")[0].fn
    value = rng.uniform(-1, 1, (3, 2)).astype("float32")
    out = k({"X": SelectedRows([2, 0, 2], 4, value)}, {})["Out"]
    dense = SelectedRows([2, 0, 2], 4, value).to_dense()
    np.testing.assert_allclose(out, [np.sum(dense.astype("float64") ** 2)], rtol=1e-6)
