"""filter_by_instag against Fluid 1.8.5's outputs (kept rows, LoD, loss weights)."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

X = np.arange(12, dtype="float64").reshape(4, 3)
TAGS = np.array([[1], [2], [3], [1], [4], [5]], "int64")
LOD = {"ins_tag_0": [[2, 1, 2, 1]]}

CASES = [
    OpCase(
        "filter_by_instag",
        {"Ins": X, "Ins_tag": TAGS, "Filter_tag": np.array([[1], [5]], "int64")},
        {"is_lod": False, "out_val_if_empty": 0},
        # Fluid 1.8.5: rows 0, 2, 3 kept, LoD [[1, 1, 1]], weights 1
        ref=lambda **_: {"Out": X[[0, 2, 3]], "LossWeight": np.ones((3, 1))},
        grad=["Ins"],
        grad_outputs=["Out"],
        lod=LOD,
    ),
    OpCase(
        "filter_by_instag",
        {"Ins": X, "Ins_tag": TAGS, "Filter_tag": np.array([[9]], "int64")},
        {"is_lod": False, "out_val_if_empty": 0},
        # Fluid 1.8.5: nothing kept -> one row of zeros, weight 0
        ref=lambda **_: {"Out": np.zeros((1, 3)), "LossWeight": np.zeros((1, 1))},
        lod=LOD,
        name="empty",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_filter_by_instag(case):
    check_case(case)


def test_layer_keeps_whole_sequences_with_is_lod():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        ins = fluid.data("ins", [None, 3], "float32", lod_level=1)
        tag = fluid.data("tag", [None, 1], "int64", lod_level=1)
        flt = fluid.data("flt", [None, 1], "int64")
        out, weight = fluid.layers.filter_by_instag(ins, tag, flt, True)
    place = fluid.CPUPlace()
    x = fluid.create_lod_tensor(np.arange(15, dtype="float32").reshape(5, 3), [[2, 3]], place)
    t = fluid.create_lod_tensor(np.array([[7], [8], [9]], "int64"), [[1, 2]], place)
    got, w = fluid.Executor(place).run(
        main,
        feed={"ins": x, "tag": t, "flt": np.array([[9]], "int64")},
        fetch_list=[out, weight],
        scope=fluid.Scope(),
        return_numpy=False,
    )
    np.testing.assert_array_equal(np.array(got), np.arange(6, 15).reshape(3, 3))
    assert got.recursive_sequence_lengths() == [[3]] and np.array(w).tolist() == [[1.0]]
    with pytest.raises(OarError, match="is_lod"):
        with fluid.program_guard(fluid.Program(), fluid.Program()):
            fluid.layers.filter_by_instag(fluid.data("a", [2, 3], "float32"), tag, flt, 1)
