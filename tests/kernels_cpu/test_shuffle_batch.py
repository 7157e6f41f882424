"""shuffle_batch: rows permuted by a seeded generator; gradient back to the original rows."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case, run_forward

X = np.arange(24, dtype="float64").reshape(3, 2, 4) / 7.0

# values: the permutation depends on the device's generator (numpy's Fisher-Yates on cpu,
# sorted uniform draws where the generator has no permutation, as cupy's): checked below
CASES = [
    OpCase(
        "shuffle_batch",
        {"X": X, "Seed": np.array([7], "int64")},
        grad=["X"],
        grad_outputs=["Out"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_shuffle_batch(case):
    check_case(case)
    out = run_forward(case)
    perm = np.asarray(out["ShuffleIdx"][0])
    assert sorted(perm.tolist()) == list(range(6))
    rows = X.reshape(-1, X.shape[-1])
    np.testing.assert_array_equal(out["Out"][0], rows[perm].reshape(X.shape))
    np.testing.assert_array_equal(run_forward(case)["ShuffleIdx"][0], perm)  # seeded


def test_shuffle_batch_on_cpu_draws_numpys_permutation():
    out = run_forward(CASES[0])  # the default place: cpu
    np.testing.assert_array_equal(out["ShuffleIdx"][0], np.random.default_rng(7).permutation(6))


def test_layer_reshuffles_each_run_and_keeps_rows_whole():
    from oar import fluid

    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 3])
        y = fluid.contrib.shuffle_batch(x, seed=11)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    xv = np.arange(30, dtype="float32").reshape(10, 3)
    with fluid.scope_guard(scope):
        exe.run(start)
        first, second = (exe.run(main, feed={"x": xv}, fetch_list=[y])[0] for _ in range(2))
    for out in (first, second):
        assert sorted(map(tuple, out.tolist())) == sorted(map(tuple, xv.tolist()))
    assert not np.array_equal(first, second)
