"""sequence_expand (rows and sequences, ref_level) and sequence_expand_as; checked against
Fluid 1.8.5's documented cases (run on the oracle)."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(5)


def _expand_rows(lens):
    def ref(X, **_):
        return {"Out": np.repeat(X, lens, axis=0)}

    return ref


def _expand_seqs(x_lens, repeats):
    def ref(X, **_):
        off = np.concatenate([[0], np.cumsum(x_lens)])
        parts = [X[off[i] : off[i + 1]] for i, r in enumerate(repeats) for _ in range(r)]
        return {"Out": np.concatenate(parts)}

    return ref


CASES = [
    OpCase(
        "sequence_expand",
        {"X": rng.standard_normal((3, 2)), "Y": np.zeros((5, 1))},
        ref=_expand_rows([2, 0, 3]),
        grad=["X"],
        lod={"y_0": [[2, 0, 3]]},
        name="rows",
    ),
    OpCase(
        "sequence_expand",
        {"X": rng.standard_normal((4, 2)), "Y": np.zeros((8, 1))},
        {"ref_level": 0},
        ref=_expand_seqs([2, 2], [2, 2]),
        grad=["X"],
        lod={"x_0": [[2, 2]], "y_0": [[2, 2], [3, 3, 1, 1]]},
        name="sequences-level0",
    ),
    OpCase(
        "sequence_expand_as",
        {"X": rng.standard_normal((3, 2)), "Y": np.zeros((6, 1))},
        ref=_expand_rows([1, 3, 2]),
        grad=["X"],
        lod={"y_0": [[1, 3, 2]]},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_sequence_expand(case):
    check_case(case)


def _run(feed):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 1], "float32")
        y = fluid.data("y", [None, 1], "float32", lod_level=1)
        x2 = fluid.data("x2", [None, 1], "float32", lod_level=1)
        y2 = fluid.data("y2", [None, 1], "float32", lod_level=2)
        outs = [
            fluid.layers.sequence_expand(x, y),
            fluid.layers.sequence_expand(x2, y2, ref_level=0),
            fluid.layers.sequence_expand_as(x, y),
        ]
    exe = fluid.Executor(fluid.CPUPlace())
    return exe.run(main, feed=feed, fetch_list=outs, return_numpy=False)


def test_fluid_documented_cases_values_and_lod():
    place = fluid.CPUPlace()
    feed = {
        "x": np.array([[1], [2], [3]], "float32"),
        "y": fluid.create_lod_tensor(np.zeros((5, 1), "float32"), [[2, 0, 3]], place),
        "x2": fluid.create_lod_tensor(np.arange(4, dtype="float32").reshape(4, 1), [[2, 2]], place),
        "y2": fluid.create_lod_tensor(np.zeros((8, 1), "float32"), [[2, 2], [3, 3, 1, 1]], place),
    }
    rows, seqs, as_ = _run(feed)
    # the values and LoDs Fluid 1.8.5 gives for the same feeds
    assert np.array(rows).ravel().tolist() == [1, 1, 3, 3, 3]
    assert rows.recursive_sequence_lengths() == []
    assert np.array(seqs).ravel().tolist() == [0, 1, 0, 1, 2, 3, 2, 3]
    assert seqs.recursive_sequence_lengths() == [[2, 2, 2, 2]]
    assert np.array(as_).ravel().tolist() == [1, 1, 3, 3, 3]
    assert as_.recursive_sequence_lengths() == [[2, 0, 3]]


def test_row_count_mismatch_is_a_clear_error():
    place = fluid.CPUPlace()
    feed = {
        "x": np.array([[1], [2]], "float32"),
        "y": fluid.create_lod_tensor(np.zeros((5, 1), "float32"), [[2, 0, 3]], place),
        "x2": fluid.create_lod_tensor(np.arange(4, dtype="float32").reshape(4, 1), [[2, 2]], place),
        "y2": fluid.create_lod_tensor(np.zeros((8, 1), "float32"), [[2, 2], [3, 3, 1, 1]], place),
    }
    with pytest.raises(
        ValueError, match="sequence_expand: X has 2 rows but Y's LoD level -1 has 3"
    ):
        _run(feed)
