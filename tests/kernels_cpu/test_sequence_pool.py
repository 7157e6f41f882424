"""sequence_pool (every pool type, empty sequences, two-level LoD) and sequence_softmax."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(11)
LENS = [3, 1, 4]
LENS_EMPTY = [2, 0, 3]


def _seqs(x, lens):
    off = np.concatenate([[0], np.cumsum(lens)]).astype(int)
    return [x[a:b] for a, b in zip(off[:-1], off[1:])]


def _pool_ref(lens, pad=0.0):
    def ref(X, pooltype, **_):
        rows = []
        for s in _seqs(X, lens):
            if len(s) == 0:
                rows.append(np.full(X.shape[1:], pad, X.dtype))
                continue
            rows.append(
                {
                    "SUM": s.sum(0),
                    "AVERAGE": s.mean(0),
                    "SQRT": s.sum(0) / np.sqrt(len(s)),
                    "MAX": s.max(0),
                    "LAST": s[-1],
                    "FIRST": s[0],
                }[pooltype]
            )
        return {"Out": np.stack(rows)}

    return ref


def _softmax_ref(lens):
    def ref(X, **_):
        out = []
        for s in _seqs(X.reshape(-1), lens):
            if len(s) == 0:
                continue
            e = np.exp(s - s.max())
            out.append(e / e.sum())
        return {"Out": np.concatenate(out).reshape(X.shape)}

    return ref


# distinct values so MAX has a unique arg max and the numeric gradient is well defined
_X = rng.permutation(np.arange(8 * 3, dtype=np.float64)).reshape(8, 3) / 7.0
_XE = rng.permutation(np.arange(5 * 2, dtype=np.float64)).reshape(5, 2) / 5.0

CASES = (
    [
        OpCase(
            "sequence_pool",
            {"X": _X},
            {"pooltype": kind},
            ref=_pool_ref(LENS),
            grad=["X"],
            grad_outputs=["Out"],
            lod={"x_0": [LENS]},
            name=kind.lower(),
        )
        for kind in ("SUM", "AVERAGE", "SQRT", "MAX", "LAST", "FIRST")
    ]
    + [
        OpCase(
            "sequence_pool",
            {"X": _XE},
            {"pooltype": kind, "pad_value": -1.5},
            ref=_pool_ref(LENS_EMPTY, -1.5),
            grad=["X"],
            grad_outputs=["Out"],
            lod={"x_0": [LENS_EMPTY]},
            name=f"{kind.lower()}-empty",
        )
        for kind in ("SUM", "AVERAGE", "MAX", "LAST", "FIRST")
    ]
    + [
        OpCase(
            "sequence_softmax",
            {"X": rng.uniform(-2, 2, (8, 1))},
            ref=_softmax_ref(LENS),
            grad=["X"],
            lod={"x_0": [LENS]},
        ),
        OpCase(
            "sequence_softmax",
            {"X": rng.uniform(-2, 2, (5,))},
            ref=_softmax_ref(LENS_EMPTY),
            grad=["X"],
            lod={"x_0": [LENS_EMPTY]},
            name="flat-empty",
        ),
    ]
)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_sequence_pool(case):
    check_case(case)


def _run(build, feed, fetch_lod=False):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        outs = build()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    return exe.run(main, feed=feed, fetch_list=outs, return_numpy=not fetch_lod)


def test_two_level_lod_pools_the_inner_level_and_keeps_the_outer():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    t = fluid.create_lod_tensor(x, [[2, 1], [1, 2, 3]], fluid.CPUPlace())

    def build():
        v = fluid.data("x", [None, 2], "float32", lod_level=2)
        return [fluid.layers.sequence_pool(v, "sum")]

    (out,) = _run(build, {"x": t}, fetch_lod=True)
    np.testing.assert_allclose(np.array(out), [x[0:1].sum(0), x[1:3].sum(0), x[3:6].sum(0)])
    assert out.recursive_sequence_lengths() == [[2, 1]]


def test_first_and_last_step_layers():
    x = rng.standard_normal((7, 2)).astype(np.float32)
    t = fluid.create_lod_tensor(x, [[2, 5]], fluid.CPUPlace())

    def build():
        v = fluid.data("x", [None, 2], "float32", lod_level=1)
        return [fluid.layers.sequence_first_step(v), fluid.layers.sequence_last_step(v)]

    first, last = _run(build, {"x": t})
    np.testing.assert_allclose(first, x[[0, 2]])
    np.testing.assert_allclose(last, x[[1, 6]])


def test_sequence_pool_rejects_a_tensor_without_lod_naming_the_op():
    def build():
        v = fluid.data("x", [None, 2], "float32")
        return [fluid.layers.sequence_pool(v, "sum")]

    with pytest.raises(ValueError, match="sequence_pool.*LoD"):
        _run(build, {"x": np.ones((3, 2), np.float32)})


def test_sequence_pool_rejects_a_lod_that_does_not_match_the_rows():
    def build():
        v = fluid.data("x", [None, 2], "float32", lod_level=1)
        return [fluid.layers.sequence_pool(v, "sum")]

    t = fluid.LoDTensor()
    t.set(np.ones((3, 2), np.float32), fluid.CPUPlace())
    t.set_recursive_sequence_lengths([[2, 2]])
    with pytest.raises(ValueError, match="4.*3 rows|rows"):
        _run(build, {"x": t})


def test_unknown_pool_type_names_the_layer():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        v = fluid.data("x", [None, 2], "float32", lod_level=1)
        with pytest.raises(ValueError, match="sequence_pool: pool_type"):
            fluid.layers.sequence_pool(v, "median")
