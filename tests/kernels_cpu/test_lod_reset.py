"""lod_reset (target_lod, Y's LoD, Y's values) and lod_append."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(2)

CASES = [
    OpCase(
        "lod_reset",
        {"X": rng.standard_normal((5, 2))},
        {"target_lod": [0, 2, 5]},
        ref=lambda X, **_: {"Out": X},
        grad=["X"],
        lod={"x_0": [[1, 4]]},
    ),
    OpCase(
        "lod_reset",
        {"X": rng.standard_normal((4, 3)), "Y": np.array([0, 1, 4], np.int32)},
        ref=lambda X, **_: {"Out": X},
        grad=["X"],
        name="from-y-values",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_lod_reset(case):
    check_case(case)


def _lods(build, feed):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        outs = build()
    got = fluid.Executor(fluid.CPUPlace()).run(main, feed=feed, fetch_list=outs, return_numpy=False)
    return [t.recursive_sequence_lengths() for t in got]


def test_lod_from_y_and_appended_level():
    place = fluid.CPUPlace()
    feed = {
        "x": fluid.create_lod_tensor(np.zeros((4, 1), "float32"), [[2, 2]], place),
        "y": fluid.create_lod_tensor(np.zeros((4, 1), "float32"), [[1, 3]], place),
    }

    def build():
        x = fluid.data("x", [None, 1], "float32", lod_level=1)
        y = fluid.data("y", [None, 1], "float32", lod_level=1)
        return [fluid.layers.lod_reset(x, y=y), fluid.layers.lod_append(x, [0, 1, 2, 3, 4])]

    assert _lods(build, feed) == [[[1, 3]], [[2, 2], [1, 1, 1, 1]]]


def test_target_lod_must_cover_the_rows():
    place = fluid.CPUPlace()
    feed = {"x": fluid.create_lod_tensor(np.zeros((4, 1), "float32"), [[2, 2]], place)}

    def build():
        x = fluid.data("x", [None, 1], "float32", lod_level=1)
        return [fluid.layers.lod_reset(x, target_lod=[0, 1, 3])]

    with pytest.raises(
        ValueError, match=r"lod_reset: the target LoD ends at 3 but input X .*has rows: 4"
    ):
        _lods(build, feed)


def test_target_lod_must_be_offsets():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 1], "float32", lod_level=1)
        with pytest.raises(TypeError, match="lod_reset: target_lod must be a list of int offsets"):
            fluid.layers.lod_reset(x, target_lod="0,1")
