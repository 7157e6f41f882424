"""tdm_child and tdm_sampler against Fluid 1.8.5 (data/fluid18_tdm.py): children of each
node id, leaf masks, node 0 as padding; the sampler's positives, labels, masks and shapes,
and the properties of its negatives (Fluid's generator draws other ones)."""

import json
from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

GOLDEN = json.loads((Path(__file__).parent / "data" / "fluid18_tdm.json").read_text())
CASES_18, SAMPLER = GOLDEN["child"], GOLDEN["sampler"]
TRAVEL, LAYER = np.array(SAMPLER["travel"], "int64"), np.array(SAMPLER["layer"], "int64")

CASES = [
    OpCase(
        "tdm_child",
        {"X": np.array(c["x"], "int64"), "TreeInfo": np.array(c["tree"], "int64")},
        {"child_nums": c["child_nums"], "dtype": "int64"},
        ref=lambda c=c, **_: {"Child": np.array(c["child"]), "LeafMask": np.array(c["leaf_mask"])},
        name=f"tree{i}",
    )
    for i, c in enumerate(CASES_18)
] + [
    OpCase(
        "tdm_sampler",
        {"X": np.array(SAMPLER["x"], "int64"), "Travel": TRAVEL, "Layer": LAYER},
        {"neg_samples_num_list": [0, 0], "layer_offset_lod": [0, 2, 6], "dtype": "int64"},
        ref=lambda **_: dict(
            zip(("Out", "Labels", "Mask"), map(np.array, SAMPLER["runs"][0]["values"]))
        ),
    )
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_tdm_child(case):
    check_case(case)


@pytest.mark.parametrize("golden", CASES_18, ids=["binary", "three-children"])
def test_tdm_child_layer_matches_fluid18(golden):
    tree = np.array(golden["tree"], "int32")
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, len(golden["x"][0])], "int32")
        init = fluid.initializer.NumpyArrayInitializer(tree)
        child, leaf = fluid.contrib.tdm_child(
            x, tree.shape[0], golden["child_nums"], param_attr=fluid.ParamAttr(initializer=init)
        )
    assert child.dtype == leaf.dtype == "int32"
    assert list(child.shape) == [-1, len(golden["x"][0]), golden["child_nums"]]
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    c, m = exe.run(main, feed={"x": np.array(golden["x"], "int32")}, fetch_list=[child, leaf])
    np.testing.assert_array_equal(c, golden["child"])
    np.testing.assert_array_equal(m, golden["leaf_mask"])
    with pytest.raises(OarError, match="node ids"):
        exe.run(main, feed={"x": np.array([[len(tree)]] * len(golden["x"][0]), "int32").reshape(1, -1)},
                fetch_list=[child])  # fmt: skip


def _sampler(negs, positive, as_list, seed=0):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 1], "int32")
        res = fluid.contrib.tdm_sampler(
            x, negs, [2, 4], 4,
            tree_travel_attr=fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(TRAVEL.astype("int32"))),
            tree_layer_attr=fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(LAYER.astype("int32"))),
            output_positive=positive, output_list=as_list, seed=seed,
        )  # fmt: skip
        flat = [v for group in res for v in (group if isinstance(group, list) else [group])]
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    feed = {"x": np.array(SAMPLER["x"] * 25, "int32")}
    return flat, exe.run(main, feed=feed, fetch_list=flat)


@pytest.mark.parametrize(
    "run", SAMPLER["runs"], ids=["no-negatives", "negatives-list", "both-list"]
)
def test_tdm_sampler_layer_matches_fluid18(run):
    flat, values = _sampler(run["neg"], run["positive"], run["as_list"], seed=7)
    assert [list(v.shape) for v in flat] == run["shapes"]
    if run["values"] is not None:
        for got, want in zip(values, run["values"]):
            np.testing.assert_array_equal(got[:4], want)
    if not run["as_list"]:
        return
    layers = len(run["neg"])
    for k, (n, nodes) in enumerate(zip(run["neg"], ([1, 2], [3, 4, 5, 6]))):
        out, labels, mask = (values[k + j * layers][..., 0] for j in range(3))
        pos = TRAVEL[np.array(SAMPLER["x"] * 25).ravel(), k]
        neg = out[:, int(run["positive"]) :]
        if run["positive"]:
            np.testing.assert_array_equal(out[:, 0], pos)
            np.testing.assert_array_equal(labels[:, 0], pos != 0)
        assert not labels[:, int(run["positive"]) :].any()
        np.testing.assert_array_equal(mask, np.broadcast_to((pos != 0)[:, None], mask.shape))
        for p, row in zip(pos, neg):
            if p == 0:
                assert not row.any()
            else:  # distinct nodes of the layer, never the positive
                assert len(set(row)) == n and set(row) <= set(nodes) - {p}


def test_tdm_sampler_draws_change_between_runs_and_check_their_arguments():
    flat, first = _sampler([1, 3], True, False)
    assert first[0].shape == (100, 6)
    rows = {tuple(r) for r in first[0][:, 2:].tolist()}
    assert len(rows) > 3  # negatives are drawn, not fixed
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 1], "int32")
        with pytest.raises(OarError, match="one entry per layer"):
            fluid.contrib.tdm_sampler(x, [1], [2, 4], 4)
        with pytest.raises(OarError, match="negative samples"):
            fluid.contrib.tdm_sampler(x, [2, 1], [2, 4], 4)
