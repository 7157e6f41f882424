"""sequence_pad / sequence_unpad (round trip, maxlen, pad value shapes) and sequence_mask."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(9)
LENS = [2, 0, 3]


def _pad_ref(lens, width=None, pad=0.0):
    def ref(X, PadValue, **_):
        width_ = width or max(lens)
        out = np.full(
            (len(lens), width_) + X.shape[1:],
            PadValue.reshape(-1)[0] if PadValue.size == 1 else 0,
            X.dtype,
        )
        if PadValue.size != 1:
            out[...] = PadValue
        off = np.concatenate([[0], np.cumsum(lens)])
        for i, n in enumerate(lens):
            out[i, :n] = X[off[i] : off[i + 1]]
        return {"Out": out, "Length": np.array(lens, np.int64)}

    return ref


def _unpad_ref(X, Length, **_):
    return {"Out": np.concatenate([X[i, :n] for i, n in enumerate(Length)])}


def _mask_ref(X, maxlen=-1, out_dtype="int64", **_):
    m = maxlen if maxlen >= 0 else X.max()
    return {"Y": (np.arange(m) < X[..., None]).astype(out_dtype)}


CASES = [
    OpCase(
        "sequence_pad",
        {"X": rng.standard_normal((5, 2)), "PadValue": np.array([-1.0])},
        ref=_pad_ref(LENS),
        grad=["X"],
        grad_outputs=["Out"],
        lod={"x_0": [LENS]},
    ),
    OpCase(
        "sequence_pad",
        {"X": rng.standard_normal((5, 2)), "PadValue": np.array([7.0, 8.0])},
        {"padded_length": 4},
        ref=_pad_ref(LENS, 4),
        grad=["X"],
        grad_outputs=["Out"],
        lod={"x_0": [LENS]},
        name="maxlen-step-pad",
    ),
    OpCase(
        "sequence_unpad",
        {"X": rng.standard_normal((3, 4, 2)), "Length": np.array([2, 0, 4], np.int64)},
        ref=_unpad_ref,
        grad=["X"],
    ),
    OpCase("sequence_mask", {"X": np.array([[1, 3], [0, 2]], np.int64)}, ref=_mask_ref),
    OpCase(
        "sequence_mask",
        {"X": np.array([1, 3, 0], np.int32)},
        {"maxlen": 5, "out_dtype": "float32"},
        ref=_mask_ref,
        name="maxlen-float",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_sequence_pad(case):
    check_case(case)


def test_pad_then_unpad_gives_back_the_sequences_and_their_lod():
    place = fluid.CPUPlace()
    x = rng.standard_normal((6, 3)).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = fluid.data("x", [None, 3], "float32", lod_level=1)
        pad = fluid.layers.fill_constant([1], "float32", 0.0)
        padded, length = fluid.layers.sequence_pad(v, pad, maxlen=5)
        back = fluid.layers.sequence_unpad(padded, length)
        mask = fluid.layers.sequence_mask(length, maxlen=5, dtype="float32")
    exe = fluid.Executor(place)
    feed = {"x": fluid.create_lod_tensor(x, [[1, 4, 1]], place)}
    p, n, b, m = exe.run(
        main, feed=feed, fetch_list=[padded, length, back, mask], return_numpy=False
    )
    assert np.array(p).shape == (3, 5, 3)
    assert np.array(n).tolist() == [1, 4, 1]
    np.testing.assert_array_equal(np.array(b), x)
    assert b.recursive_sequence_lengths() == [[1, 4, 1]]
    np.testing.assert_array_equal(np.array(m).sum(1), [1, 4, 1])


def test_maxlen_shorter_than_a_sequence_names_the_op():
    place = fluid.CPUPlace()
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = fluid.data("x", [None, 1], "float32", lod_level=1)
        pad = fluid.layers.fill_constant([1], "float32", 0.0)
        padded, _ = fluid.layers.sequence_pad(v, pad, maxlen=2)
    exe = fluid.Executor(place)
    feed = {"x": fluid.create_lod_tensor(np.ones((4, 1), "float32"), [[1, 3]], place)}
    with pytest.raises(ValueError, match="sequence_pad: padded_length .maxlen. 2 is shorter"):
        exe.run(main, feed=feed, fetch_list=[padded])
