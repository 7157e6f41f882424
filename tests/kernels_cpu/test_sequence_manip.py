"""sequence_reshape / reverse / concat / slice / enumerate / scatter, and the values and LoDs
Fluid 1.8.5 gives for the same feeds (run on the oracle)."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(21)


def _segs(x, lens):
    off = np.concatenate([[0], np.cumsum(lens)]).astype(int)
    return [x[a:b] for a, b in zip(off[:-1], off[1:])]


def _reverse_ref(lens):
    return lambda X, **_: {"Y": np.concatenate([s[::-1] for s in _segs(X, lens)])}


def _concat_ref(lens_a, lens_b):
    def ref(X, **_):
        a, b = _segs(X[0], lens_a), _segs(X[1], lens_b)
        return {"Out": np.concatenate([np.concatenate([p, q]) for p, q in zip(a, b)])}

    return ref


def _slice_ref(lens):
    def ref(X, Offset, Length, **_):
        return {
            "Out": np.concatenate(
                [s[o : o + n] for s, o, n in zip(_segs(X, lens), Offset.ravel(), Length.ravel())]
            )
        }

    return ref


def _enumerate_ref(lens):
    def ref(X, win_size, pad_value=0, **_):
        rows = []
        for s in _segs(X.ravel(), lens):
            for i in range(len(s)):
                w = list(s[i : i + win_size])
                rows.append(w + [pad_value] * (win_size - len(w)))
        return {"Out": np.array(rows, X.dtype)}

    return ref


def _scatter_ref(lens):
    def ref(X, Ids, Updates, **_):
        out = X.copy()
        for i, (ids, upd) in enumerate(zip(_segs(Ids.ravel(), lens), _segs(Updates.ravel(), lens))):
            for j, u in zip(ids, upd):
                out[i, j] += u
        return {"Out": out}

    return ref


CASES = [
    OpCase(
        "sequence_reshape",
        {"X": rng.standard_normal((6, 2))},
        {"new_dim": 4},
        ref=lambda X, new_dim: {"Out": X.reshape(-1, new_dim)},
        grad=["X"],
        lod={"x_0": [[2, 4]]},
    ),
    OpCase(
        "sequence_reverse",
        {"X": rng.standard_normal((6, 2))},
        ref=_reverse_ref([1, 0, 5]),
        grad=["X"],
        lod={"x_0": [[1, 0, 5]]},
    ),
    OpCase(
        "sequence_concat",
        {"X": [rng.standard_normal((3, 2)), rng.standard_normal((4, 2))]},
        ref=_concat_ref([1, 2], [3, 1]),
        grad=["X"],
        lod={"x_0": [[1, 2]], "x_1": [[3, 1]]},
    ),
    OpCase(
        "sequence_slice",
        {
            "X": rng.standard_normal((7, 2)),
            "Offset": np.array([[1], [0], [2]], np.int64),
            "Length": np.array([[2], [0], [1]], np.int64),
        },
        ref=_slice_ref([3, 1, 3]),
        grad=["X"],
        lod={"x_0": [[3, 1, 3]]},
    ),
    OpCase(
        "sequence_enumerate",
        {"X": np.array([[1], [2], [3], [4], [5]], np.int64)},
        {"win_size": 2, "pad_value": 0},
        ref=_enumerate_ref([3, 2]),
        lod={"x_0": [[3, 2]]},
    ),
    OpCase(
        "sequence_enumerate",
        {"X": np.array([[1], [2], [3], [4]], np.int32)},
        {"win_size": 3, "pad_value": -1},
        ref=_enumerate_ref([1, 3]),
        lod={"x_0": [[1, 3]]},
        name="win3",
    ),
    OpCase(
        "sequence_scatter",
        {
            "X": rng.standard_normal((2, 4)),
            "Ids": np.array([[0], [2], [3], [1]], np.int64),
            "Updates": rng.standard_normal((4, 1)),
        },
        ref=_scatter_ref([3, 1]),
        grad=["X", "Updates"],
        lod={"ids_0": [[3, 1]], "updates_0": [[3, 1]]},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_sequence_manip(case):
    check_case(case)


def test_values_and_lods_match_fluid():
    place = fluid.CPUPlace()
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 2], "float32", lod_level=1)
        ids = fluid.data("ids", [None, 1], "int64", lod_level=1)
        off = fluid.layers.assign(np.array([[0], [1]], dtype="int64"))
        ln = fluid.layers.assign(np.array([[1], [1]], dtype="int64"))
        outs = [
            fluid.layers.sequence_reshape(x, 4),
            fluid.layers.sequence_reverse(x),
            fluid.layers.sequence_concat([x, x]),
            fluid.layers.sequence_slice(x, off, ln),
            fluid.layers.sequence_enumerate(ids, win_size=2, pad_value=0),
            fluid.layers.lod_reset(x, target_lod=[0, 1, 4]),
            fluid.layers.lod_append(x, [0, 1, 2, 3, 4]),
        ]
    exe = fluid.Executor(place)
    feed = {
        "x": fluid.create_lod_tensor(np.arange(8, dtype="float32").reshape(4, 2), [[2, 2]], place),
        "ids": fluid.create_lod_tensor(
            np.array([[1], [2], [3], [4], [5]], "int64"), [[3, 2]], place
        ),
    }
    got = exe.run(main, feed=feed, fetch_list=outs, return_numpy=False)
    # printed by Fluid 1.8.5 for the same program and feeds
    fluid18 = [
        ([[0, 1, 2, 3], [4, 5, 6, 7]], [[1, 1]]),
        ([[2, 3], [0, 1], [6, 7], [4, 5]], [[2, 2]]),
        ([[0, 1], [2, 3], [0, 1], [2, 3], [4, 5], [6, 7], [4, 5], [6, 7]], [[4, 4]]),
        ([[0, 1], [6, 7]], [[1, 1]]),
        ([[1, 2], [2, 3], [3, 0], [4, 5], [5, 0]], [[3, 2]]),
        ([[0, 1], [2, 3], [4, 5], [6, 7]], [[1, 3]]),
        ([[0, 1], [2, 3], [4, 5], [6, 7]], [[2, 2], [1, 1, 1, 1]]),
    ]
    for t, (values, lens) in zip(got, fluid18):
        assert np.array(t).tolist() == values
        assert t.recursive_sequence_lengths() == lens


def test_slice_out_of_range_names_the_sequence():
    place = fluid.CPUPlace()
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 2], "float32", lod_level=1)
        off = fluid.layers.assign(np.array([[0], [1]], dtype="int64"))
        ln = fluid.layers.assign(np.array([[1], [2]], dtype="int64"))
        out = fluid.layers.sequence_slice(x, off, ln)
    exe = fluid.Executor(place)
    feed = {"x": fluid.create_lod_tensor(np.zeros((4, 2), "float32"), [[2, 2]], place)}
    with pytest.raises(
        ValueError, match="sequence_slice: sequence 1 has 2 rows; Offset 1 . Length 2"
    ):
        exe.run(main, feed=feed, fetch_list=[out])


def test_concat_needs_the_same_number_of_sequences():
    place = fluid.CPUPlace()
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        a = fluid.data("a", [None, 1], "float32", lod_level=1)
        b = fluid.data("b", [None, 1], "float32", lod_level=1)
        out = fluid.layers.sequence_concat([a, b])
    feed = {
        "a": fluid.create_lod_tensor(np.zeros((3, 1), "float32"), [[1, 2]], place),
        "b": fluid.create_lod_tensor(np.zeros((3, 1), "float32"), [[3]], place),
    }
    with pytest.raises(ValueError, match="X.1. has 1 sequences but X.0. has 2"):
        fluid.Executor(place).run(main, feed=feed, fetch_list=[out])
