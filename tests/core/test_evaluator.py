"""fluid.evaluator: ChunkEvaluator, EditDistance, DetectionMAP; the numbers Fluid 1.8.5 gives
on the same batches (run there with the same program)."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid

pytestmark = pytest.mark.filterwarnings("ignore:fluid.evaluator:DeprecationWarning")

# (input ids, label ids, sequence lengths): two batches of two sequences each
BATCHES = [
    ([0, 1, 2, 2, 3, 0], [0, 1, 2, 0, 3, 4], [3, 3]),
    ([1, 2, 0, 3], [1, 2, 2, 3], [2, 2]),
]
# Fluid 1.8.5: ChunkEvaluator(inp, lab, "IOB", 2) and EditDistance(inp, lab, ignored_tokens=[0])
FLUID_BATCH = [[0.5, 0.5, 0.5, 1.0, 1], [0.5, 0.6666667, 0.57142854, 0.5, 1]]
FLUID_CHUNK_EVAL = [[0.5, 0.5, 0.5], [0.5, 0.5714286, 0.53333336]]
FLUID_EDIT_EVAL = [[0.5, 0.5], [0.375, 0.5]]


def _lod(values, lens):
    return fluid.create_lod_tensor(
        np.array(values, "int64").reshape(-1, 1), [lens], fluid.CPUPlace()
    )


def test_chunk_and_edit_distance_evaluators_accumulate_as_fluid():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        inp = fluid.data("inp", [None, 1], "int64", lod_level=1)
        lab = fluid.data("lab", [None, 1], "int64", lod_level=1)
        with pytest.warns(DeprecationWarning, match="fluid.metrics"):
            ce = fluid.evaluator.ChunkEvaluator(inp, lab, "IOB", 2)
        ed = fluid.evaluator.EditDistance(inp, lab, ignored_tokens=[0])
    assert [s.dtype for s in ed.states] == ["float32", "int64", "int64"]
    assert all(s.persistable for s in ce.states + ed.states)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    ce.reset(exe)
    ed.reset(exe)
    for (a, b, lens), batch, chunk, edit in zip(
        BATCHES, FLUID_BATCH, FLUID_CHUNK_EVAL, FLUID_EDIT_EVAL
    ):
        got = exe.run(main, feed={"inp": _lod(a, lens), "lab": _lod(b, lens)},
                      fetch_list=ce.metrics + ed.metrics)  # fmt: skip
        np.testing.assert_allclose(np.concatenate([np.ravel(g) for g in got]), batch, rtol=1e-6)
        values = ce.eval(exe)
        assert all(v.dtype == np.float32 and v.shape == (1,) for v in values)
        np.testing.assert_allclose(np.concatenate(values), chunk, rtol=1e-6)
        np.testing.assert_allclose(np.concatenate(ed.eval(exe)), edit, rtol=1e-6)
    ce.reset(exe)
    np.testing.assert_array_equal(np.concatenate(ce.eval(exe)), [0, 0, 0])
    np.testing.assert_allclose(np.concatenate(ed.eval(exe)), [0.375, 0.5], rtol=1e-6)


def test_detection_map_evaluator_gives_batch_and_accumulated_map():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        det = fluid.data("det", [None, 6], lod_level=1)
        gl = fluid.data("gl", [None, 1], lod_level=1)
        gb = fluid.data("gb", [None, 4], lod_level=1)
        dm = fluid.evaluator.DetectionMAP(det, gl, gb, class_num=3)
        cur, accum = dm.get_map_var()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    place = fluid.CPUPlace()
    dets = np.array([[1, 0.9, 0, 0, 10, 10], [2, 0.8, 20, 20, 30, 30]], "float32")
    good = fluid.create_lod_tensor(dets, [[2]], place)
    miss = fluid.create_lod_tensor(
        (dets[:1] + [0, 0, 50, 50, 50, 50]).astype("float32"), [[1]], place
    )
    feed = {
        "gl": fluid.create_lod_tensor(np.array([[1], [2]], "float32"), [[2]], place),
        "gb": fluid.create_lod_tensor(np.array([[0, 0, 10, 10], [20, 20, 30, 30]], "float32"), [[2]], place),
    }  # fmt: skip
    c1, a1 = exe.run(main, feed={**feed, "det": good}, fetch_list=[cur, accum])
    c2, a2 = exe.run(main, feed={**feed, "det": miss}, fetch_list=[cur, accum])
    assert float(c1[0]) == pytest.approx(1.0) and float(a1[0]) == pytest.approx(1.0)
    assert float(c2[0]) == pytest.approx(0.0) and 0.0 < float(a2[0]) < 1.0
    dm.reset(exe)
    _, a3 = exe.run(main, feed={**feed, "det": good}, fetch_list=[cur, accum])
    assert float(a3[0]) == pytest.approx(1.0)
    with pytest.raises(NotImplementedError):
        dm.eval(exe)
