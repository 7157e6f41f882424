"""edit_distance (normalized or not, ignored tokens, padded) and sequence_erase; Fluid
1.8.5's numbers for the same feeds."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case


def _lev(a, b):
    d = np.arange(len(b) + 1)
    for i, x in enumerate(a, 1):
        prev, d = d, np.zeros_like(d)
        d[0] = i
        for j, y in enumerate(b, 1):
            d[j] = min(prev[j] + 1, d[j - 1] + 1, prev[j - 1] + (x != y))
    return d[-1]


def _ed_ref(h_lens, r_lens):
    def ref(Hyps, Refs, normalized=False, **_):
        ho, ro = np.cumsum([0] + h_lens), np.cumsum([0] + r_lens)
        out = []
        for i in range(len(h_lens)):
            h, r = Hyps[ho[i] : ho[i + 1], 0], Refs[ro[i] : ro[i + 1], 0]
            out.append(_lev(h, r) / (len(r) if normalized else 1))
        return {
            "Out": np.array(out, np.float32).reshape(-1, 1),
            "SequenceNum": np.array([len(h_lens)]),
        }

    return ref


_H = np.array([[1], [2], [3], [4], [5], [6]], np.int64)
_R = np.array([[1], [3], [3], [5], [6], [7], [6]], np.int64)
CASES = [
    OpCase(
        "edit_distance",
        {"Hyps": _H, "Refs": _R},
        ref=_ed_ref([3, 2, 1], [2, 4, 1]),
        lod={"hyps_0": [[3, 2, 1]], "refs_0": [[2, 4, 1]]},
    ),
    OpCase(
        "edit_distance",
        {"Hyps": _H, "Refs": _R},
        {"normalized": True},
        ref=_ed_ref([3, 2, 1], [2, 4, 1]),
        lod={"hyps_0": [[3, 2, 1]], "refs_0": [[2, 4, 1]]},
        name="normalized",
    ),
    OpCase(
        "sequence_erase",
        {"X": np.array([[2], [1], [2], [3], [2], [2]], np.int64)},
        {"tokens": [2]},
        ref=lambda X, tokens: {"Out": np.array([[1], [3]], np.int64)},
        lod={"x_0": [[3, 1, 2]]},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_edit_distance(case):
    check_case(case)


def test_values_equal_fluid_1_8_5_and_ignored_tokens():
    place = fluid.CPUPlace()
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        ref = fluid.data("r", [None, 1], "int64", lod_level=1)
        hyp = fluid.data("h", [None, 1], "int64", lod_level=1)
        ed, num = fluid.layers.edit_distance(hyp, ref)
        raw, _ = fluid.layers.edit_distance(hyp, ref, normalized=False)
        ign, _ = fluid.layers.edit_distance(hyp, ref, normalized=False, ignored_tokens=[2, 4])
    feed = {
        "h": fluid.create_lod_tensor(np.array([[1], [2], [3], [4], [5]], "int64"), [[3, 2]], place),
        "r": fluid.create_lod_tensor(
            np.array([[1], [3], [3], [5], [6], [7]], "int64"), [[2, 4]], place
        ),
    }
    got = fluid.Executor(place).run(main, feed=feed, fetch_list=[ed, num, raw, ign])
    # Fluid 1.8.5: [[0.5], [0.75]], [2], [[1.0], [3.0]]
    assert np.asarray(got[0]).ravel().tolist() == [0.5, 0.75]
    assert np.asarray(got[1]).tolist() == [2]
    assert np.asarray(got[2]).ravel().tolist() == [1.0, 3.0]
    assert np.asarray(got[3]).ravel().tolist() == [0.0, 3.0]
