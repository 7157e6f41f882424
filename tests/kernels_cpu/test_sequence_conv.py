"""sequence_conv (context windows inside sequences) and row_conv, against numpy loops."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(17)
LENS = [3, 1, 4]


def _segs(lens):
    off = np.concatenate([[0], np.cumsum(lens)]).astype(int)
    return list(zip(off[:-1], off[1:]))


def _seq_conv_ref(lens):
    def ref(X, Filter, contextLength, contextStart=0, **_):
        d = X.shape[1]
        col = np.zeros((len(X), contextLength * d))
        for a, b in _segs(lens):
            for t in range(a, b):
                for k in range(contextLength):
                    s = t + contextStart + k
                    if a <= s < b:
                        col[t, k * d : (k + 1) * d] = X[s]
        return {"Out": col @ Filter}

    return ref


def _row_conv_ref(lens):
    def ref(X, Filter, **_):
        out = np.zeros_like(X)
        for a, b in _segs(lens):
            for t in range(a, b):
                for k in range(len(Filter)):
                    if t + k < b:
                        out[t] += X[t + k] * Filter[k]
        return {"Out": out}

    return ref


CASES = [
    OpCase(
        "sequence_conv",
        {"X": rng.standard_normal((8, 2)), "Filter": rng.standard_normal((6, 3))},
        {"contextLength": 3, "contextStart": -1},
        ref=_seq_conv_ref(LENS),
        grad=["X", "Filter"],
        lod={"x_0": [LENS]},
    ),
    OpCase(
        "sequence_conv",
        {"X": rng.standard_normal((8, 3)), "Filter": rng.standard_normal((6, 2))},
        {"contextLength": 2, "contextStart": 0},
        ref=_seq_conv_ref(LENS),
        grad=["X", "Filter"],
        lod={"x_0": [LENS]},
        name="lookahead",
    ),
    OpCase(
        "row_conv",
        {"X": rng.standard_normal((8, 3)), "Filter": rng.standard_normal((3, 3))},
        ref=_row_conv_ref(LENS),
        grad=["X", "Filter"],
        lod={"x_0": [LENS]},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_sequence_conv(case):
    check_case(case)


def test_sequence_conv_pool_net_builds_conv_bias_act_and_pool():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 4], "float32", lod_level=1)
        out = fluid.nets.sequence_conv_pool(x, num_filters=5, filter_size=3, act="tanh")
    types = [op.type for op in main.global_block().ops]
    assert types == ["sequence_conv", "elementwise_add", "tanh", "sequence_pool"]
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    feed = {
        "x": fluid.create_lod_tensor(
            rng.standard_normal((6, 4)).astype("float32"), [[2, 4]], fluid.CPUPlace()
        )
    }
    (res,) = exe.run(main, feed=feed, fetch_list=[out])
    assert res.shape == (2, 5)
    assert np.all(np.abs(res) <= 1)


def test_sequence_conv_needs_a_known_width():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 4, 2], "float32", lod_level=1)
        with pytest.raises(ValueError, match="sequence_conv: input must be .rows, width."):
            fluid.layers.sequence_conv(x, num_filters=2)
