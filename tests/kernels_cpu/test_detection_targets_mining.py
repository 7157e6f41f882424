"""mine_hard_examples(mining_type="hard_example") against Fluid 1.8.5's op (golden data),
and ssd_loss with hard-example mining."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.golden import load_golden
from oar.testing import OpCase, check_case

DATA = Path(__file__).parent / "data"
golden = load_golden(DATA / "fluid18_mine_hard_examples.py")
GOLDEN = np.load(DATA / "fluid18_mine_hard_examples.npz")

CASES = [
    OpCase(
        "mine_hard_examples",
        {
            "ClsLoss": np.array([[0.1, 0.9, 0.5, 0.7, 0.3]], "float32"),
            "LocLoss": np.array([[0.0, 0.0, 0.0, 0.0, 0.6]], "float32"),
            "MatchIndices": np.array([[0, -1, 1, -1, -1]], "int32"),
            "MatchDist": np.array([[0.8, 0.1, 0.2, 0.6, 0.0]], "float32"),
        },
        {"mining_type": "hard_example", "sample_size": 3},
        # losses 0.1 0.9 0.5 0.7 0.9: priors 1, 4, 3 kept; positive 0 and 2 dropped
        ref=lambda **_: {
            "NegIndices": np.array([[1], [3], [4]], "int32"),
            "UpdatedMatchIndices": np.array([[-1, -1, -1, -1, -1]], "int32"),
        },
        name="hard_example",
    )
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_mine_hard_examples(case):
    check_case(case)


@pytest.mark.parametrize("name", list(golden.CASES))
def test_hard_example_matches_fluid18(name):
    with_loc, sample, thr = golden.CASES[name]
    data = golden.inputs()
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        v = {k: fluid.data(k, [golden.N, golden.P], a.dtype.name) for k, a in data.items()}
        block = main.global_block()
        neg = block.create_var(name="neg", dtype="int32", lod_level=1)
        upd = block.create_var(name="upd", dtype="int32")
        ins = {"ClsLoss": [v["cls"]], "MatchIndices": [v["match"]], "MatchDist": [v["dist"]]}
        if with_loc:
            ins["LocLoss"] = [v["loc"]]
        block.append_op(
            "mine_hard_examples",
            ins,
            {"NegIndices": [neg], "UpdatedMatchIndices": [upd]},
            {"mining_type": "hard_example", "sample_size": sample, "neg_dist_threshold": thr},
        )
    got_neg, got_upd = fluid.Executor(fluid.CPUPlace()).run(
        main, feed=data, fetch_list=[neg, upd], return_numpy=False
    )
    np.testing.assert_array_equal(np.array(got_neg), GOLDEN[name + "_neg"])
    assert list(got_neg.lod()[-1]) == list(GOLDEN[name + "_neg_lod"])
    np.testing.assert_array_equal(np.array(got_upd), GOLDEN[name + "_updated"])


def _ssd_loss(**kw):
    rng = np.random.RandomState(4)
    priors = np.array(
        [[0.1 * i, 0.1 * i, 0.1 * i + 0.3, 0.1 * i + 0.3] for i in range(6)], "float32"
    )
    feed = {
        "loc": rng.randn(2, 6, 4).astype("float32") * 0.1,
        "conf": rng.randn(2, 6, 3).astype("float32"),
        "gt": fluid.create_lod_tensor(
            np.array([[0.1, 0.1, 0.4, 0.4], [0.3, 0.3, 0.6, 0.6], [0.5, 0.5, 0.8, 0.8]], "float32"),
            [[2, 1]],
            fluid.CPUPlace(),
        ),
        "label": fluid.create_lod_tensor(
            np.array([[1], [2], [1]], "int32"), [[2, 1]], fluid.CPUPlace()
        ),
    }
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        loc = fluid.data("loc", [2, 6, 4], "float32")
        conf = fluid.data("conf", [2, 6, 3], "float32")
        gt = fluid.data("gt", [-1, 4], "float32", lod_level=1)
        label = fluid.data("label", [-1, 1], "int32", lod_level=1)
        pb = fluid.layers.assign(priors)
        loss = fluid.layers.ssd_loss(
            loc, conf, gt, label, pb, [0.1, 0.1, 0.2, 0.2], normalize=False, **kw
        )
    return fluid.Executor(fluid.CPUPlace()).run(main, feed=feed, fetch_list=[loss])[0]


def test_ssd_loss_with_hard_example_mining():
    everything = _ssd_loss(mining_type="hard_example", sample_size=6)
    # keeping every prior equals max_negative mining that keeps every negative
    all_negatives = _ssd_loss(neg_pos_ratio=100.0, neg_overlap=1.01)
    np.testing.assert_allclose(everything, all_negatives, rtol=1e-6)
    fewer = _ssd_loss(mining_type="hard_example", sample_size=2)
    assert fewer.shape == (2, 1) and (fewer < everything).all()
