"""gather_tree: Fluid 1.8.5's documented example, and random trees against a loop."""

from pathlib import Path

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(71)


def _ref(Ids, Parents):
    steps, batch, beam = Ids.shape
    out = np.empty_like(Ids)
    for b in range(batch):
        for k in range(beam):
            parent = k
            for t in range(steps - 1, -1, -1):
                out[t, b, k] = Ids[t, b, parent]
                parent = Parents[t, b, parent]
    return {"Out": out}


_IDS = np.array([[[2, 2], [6, 1]], [[3, 9], [6, 1]], [[0, 1], [9, 0]]], np.int64)
_PARENTS = np.array([[[0, 0], [1, 1]], [[1, 0], [1, 0]], [[0, 0], [0, 1]]], np.int64)
CASES = [
    OpCase(
        "gather_tree",
        {"Ids": _IDS, "Parents": _PARENTS},
        # Fluid 1.8.5 gives this for its documented example
        ref=lambda Ids, Parents: {
            "Out": np.array([[[2, 2], [1, 6]], [[3, 3], [6, 1]], [[0, 1], [9, 0]]])
        },
        name="fluid-example",
    ),
    OpCase(
        "gather_tree",
        {"Ids": rng.integers(0, 50, (5, 3, 4)), "Parents": rng.integers(0, 4, (5, 3, 4))},
        ref=_ref,
        name="random",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_beam_search(case):
    check_case(case)


# --- beam_search / beam_search_decode: every step of a decode made by Fluid 1.8.5 ---
# (tests/kernels_cpu/data/fluid18_beam_search.py generates the golden data with the oracle)

GOLDEN = np.load(Path(__file__).parent / "data" / "fluid18_beam_search.npz")
N_STEPS = int(GOLDEN["steps"])


def _unpack(packed):
    lod, cur = [], []
    for v in packed.tolist():
        if v == -1:
            lod.append(cur)
            cur = []
        else:
            cur.append(int(v))
    return lod


def _lengths(offsets_lod):
    return [[b - a for a, b in zip(lv[:-1], lv[1:])] for lv in offsets_lod]


def _step_case(k):
    g = {n: GOLDEN[f"{n}_{k}"] for n in ("pre_ids", "pre_scores", "ids", "scores")}
    lens = _lengths(_unpack(GOLDEN[f"lod_{k}"]))
    want = {
        "selected_ids": GOLDEN[f"sel_ids_{k}"],
        "selected_scores": GOLDEN[f"sel_scores_{k}"],
        "parent_idx": GOLDEN[f"parent_{k}"],
    }
    return OpCase(
        "beam_search",
        g,
        {"beam_size": 2, "end_id": 1, "level": 0},
        ref=lambda **_: want,
        lod={f"{slot}_0": lens for slot in g},
        name=f"fluid18-step{k}",
    )


def _decode_case():
    ids, scores, lod = [], [], {}
    for k in range(N_STEPS + 1):
        if k == 0:
            i, s, lv = GOLDEN["pre_ids_0"], GOLDEN["pre_scores_0"], GOLDEN["lod_0"]
        else:
            i, s = GOLDEN[f"sel_ids_{k - 1}"], GOLDEN[f"sel_scores_{k - 1}"]
            lv = GOLDEN[f"sel_lod_{k - 1}"]
        ids.append(i)
        scores.append(s)
        lod[f"ids_{k}"] = lod[f"scores_{k}"] = _lengths(_unpack(lv))
    want = {"SentenceIds": GOLDEN["sent_ids"], "SentenceScores": GOLDEN["sent_scores"]}
    return OpCase(
        "beam_search_decode",
        {"Ids": ids, "Scores": scores},
        {"beam_size": 2, "end_id": 1},
        ref=lambda **_: want,
        lod=lod,
        name="fluid18",
    )


BEAM_CASES = [_step_case(k) for k in range(N_STEPS)] + [_decode_case()]
CASES += BEAM_CASES


@pytest.mark.parametrize("case", BEAM_CASES, ids=str)
def test_beam_search_lod(case):
    check_case(case)


def _run_with_lod(case):
    from oar import fluid
    from oar.testing import _build, _feed

    main, feeds, _, out_vars = _build(case)
    names = [vs[0].name for vs in out_vars.values()]
    exe = fluid.Executor(fluid.CPUPlace())
    got = exe.run(main, feed=_feed(feeds, case.lod), fetch_list=names, return_numpy=False)
    return dict(zip(out_vars, got))


@pytest.mark.parametrize("k", range(N_STEPS))
def test_beam_search_lod_equals_fluid(k):
    got = _run_with_lod(_step_case(k))
    assert got["selected_ids"].lod() == _unpack(GOLDEN[f"sel_lod_{k}"])
    assert got["selected_scores"].lod() == _unpack(GOLDEN[f"sel_lod_{k}"])


def test_beam_search_decode_lod_equals_fluid():
    got = _run_with_lod(_decode_case())
    assert got["SentenceIds"].lod() == _unpack(GOLDEN["sent_lod"])
