"""linear_chain_crf against brute-force path enumeration, crf_decoding against the best
enumerated path, and the numbers Fluid 1.8.5 gives for the same feeds."""

import itertools

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(41)
D = 3
LENS = [2, 3, 1]


def _segs(lens):
    off = np.concatenate([[0], np.cumsum(lens)]).astype(int)
    return list(zip(off[:-1], off[1:]))


def _score(xs, ys, w):
    s = w[0][ys[0]] + w[1][ys[-1]] + sum(xs[t, y] for t, y in enumerate(ys))
    return s + sum(w[2 + ys[t - 1], ys[t]] for t in range(1, len(ys)))


def _crf_ref(lens):
    def ref(Emission, Transition, Label, **_):
        nll = []
        for a, b in _segs(lens):
            xs, ys = Emission[a:b], Label[a:b, 0]
            paths = [_score(xs, p, Transition) for p in itertools.product(range(D), repeat=b - a)]
            nll.append(np.log(np.exp(paths).sum()) - _score(xs, ys, Transition))
        return {"LogLikelihood": np.array(nll).reshape(-1, 1)}

    return ref


def _decode_ref(lens):
    def ref(Emission, Transition, **_):
        out = []
        for a, b in _segs(lens):
            xs = Emission[a:b]
            out += max(
                itertools.product(range(D), repeat=b - a), key=lambda p: _score(xs, p, Transition)
            )
        return {"ViterbiPath": np.array(out).reshape(-1, 1)}

    return ref


_LABEL = np.array([[0], [2], [1], [1], [0], [2]], np.int64)
CASES = [
    OpCase(
        "linear_chain_crf",
        {
            "Emission": rng.uniform(-1, 1, (6, D)),
            "Transition": rng.uniform(-1, 1, (D + 2, D)),
            "Label": _LABEL,
        },
        ref=_crf_ref(LENS),
        grad=["Emission", "Transition"],
        grad_outputs=["LogLikelihood"],
        lod={"emission_0": [LENS], "label_0": [LENS]},
    ),
    OpCase(
        "crf_decoding",
        {"Emission": rng.uniform(-1, 1, (6, D)), "Transition": rng.uniform(-1, 1, (D + 2, D))},
        ref=_decode_ref(LENS),
        lod={"emission_0": [LENS]},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_crf(case):
    check_case(case)


def _program(padded=False):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        if padded:
            x = fluid.data("x", [None, 3, 3], "float32")
            y = fluid.data("y", [None, 3], "int64")
            n = fluid.data("n", [None], "int64")
        else:
            x = fluid.data("x", [None, 3], "float32", lod_level=1)
            y = fluid.data("y", [None, 1], "int64", lod_level=1)
            n = None
        attr = fluid.ParamAttr(name="crfw")
        crf = fluid.layers.linear_chain_crf(x, y, param_attr=attr, length=n)
        dec = fluid.layers.crf_decoding(x, param_attr=attr, length=n)
        hit = fluid.layers.crf_decoding(x, param_attr=attr, label=y, length=n)
    return main, startup, [crf, dec, hit]


def _run(padded):
    place = fluid.CPUPlace()
    main, startup, fetch = _program(padded)
    exe = fluid.Executor(place)
    scope = fluid.Scope()
    rs = np.random.RandomState(0)  # the oracle's draws
    w = rs.uniform(-1, 1, (5, 3)).astype("float32")
    xv = rs.uniform(-1, 1, (5, 3)).astype("float32")
    yv = np.array([[0], [2], [1], [1], [0]], "int64")
    with fluid.scope_guard(scope):
        exe.run(startup)
        scope.find_var("crfw").get_tensor().set(w, place)
        if padded:
            xp = np.zeros((2, 3, 3), "float32")
            yp = np.zeros((2, 3), "int64")
            xp[0, :2], xp[1, :3] = xv[:2], xv[2:]
            yp[0, :2], yp[1, :3] = yv[:2, 0], yv[2:, 0]
            feed = {"x": xp, "y": yp, "n": np.array([2, 3], "int64")}
        else:
            feed = {
                "x": fluid.create_lod_tensor(xv, [[2, 3]], place),
                "y": fluid.create_lod_tensor(yv, [[2, 3]], place),
            }
        return exe.run(main, feed=feed, fetch_list=fetch, return_numpy=False)


def test_values_equal_fluid_1_8_5():
    nll, path, hit = _run(padded=False)
    # printed by Fluid 1.8.5 for the same program, weights and feeds
    np.testing.assert_allclose(
        np.array(nll).ravel(), [1.977919578552246, 2.794833183288574], rtol=1e-5
    )
    assert np.array(path).ravel().tolist() == [2, 1, 2, 1, 0]
    assert path.recursive_sequence_lengths() == [[2, 3]]
    assert np.array(hit).ravel().tolist() == [0, 0, 0, 1, 1]


def test_padded_input_with_length_gives_the_same_numbers():
    nll, path, hit = _run(padded=True)
    np.testing.assert_allclose(
        np.array(nll).ravel(), [1.977919578552246, 2.794833183288574], rtol=1e-5
    )
    assert np.array(path).tolist() == [[2, 1, 0], [2, 1, 0]]


def test_label_out_of_range_names_the_op():
    place = fluid.CPUPlace()
    main, startup, fetch = _program()
    exe = fluid.Executor(place)
    exe.run(startup)
    feed = {
        "x": fluid.create_lod_tensor(np.zeros((2, 3), "float32"), [[2]], place),
        "y": fluid.create_lod_tensor(np.array([[0], [5]], "int64"), [[2]], place),
    }
    with pytest.raises(ValueError, match=r"linear_chain_crf: Label values must lie in \[0, 3\)"):
        exe.run(main, feed=feed, fetch_list=fetch[:1])
