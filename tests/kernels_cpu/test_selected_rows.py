"""merge_selected_rows / get_tensor_from_selected_rows on dense inputs (every row once) and, through a
sparse embedding gradient, on real SelectedRows."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

X = np.arange(6, dtype="float32").reshape(3, 2)

CASES = [
    OpCase("merge_selected_rows", {"X": X}, ref=lambda X: {"Out": X}),
    OpCase("get_tensor_from_selected_rows", {"X": X}, ref=lambda X: {"Out": X}),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_selected_rows_ops(case):
    check_case(case)


def test_on_a_sparse_embedding_gradient():
    main, startup = fluid.Program(), fluid.Program()
    L = fluid.layers
    with fluid.program_guard(main, startup):
        ids = L.data("ids", [1], dtype="int64")
        emb = L.embedding(
            ids,
            [6, 2],
            is_sparse=True,
            param_attr=fluid.ParamAttr(name="t", initializer=fluid.initializer.Constant(1.0)),
        )
        loss = L.reduce_sum(L.scale(emb, 3.0))
        ((_, grad),) = fluid.backward.append_backward(loss)
        merged = L.merge_selected_rows(grad)
        values = L.get_tensor_from_selected_rows(merged)
        raw = L.get_tensor_from_selected_rows(grad)
    assert (
        grad.type == "selected_rows" and merged.type == "selected_rows" and values.shape == (-1, 2)
    )
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    got_values, got_raw = exe.run(
        main,
        feed={"ids": np.array([[4], [1], [4]], "int64")},
        fetch_list=[values, raw],
        scope=scope,
    )
    np.testing.assert_array_equal(got_raw, np.full((3, 2), 3.0))
    np.testing.assert_array_equal(
        got_values, [[3.0, 3.0], [6.0, 6.0]]
    )  # rows 1 and 4, 4 summed twice
