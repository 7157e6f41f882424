"""contrib text-matching ops (match_matrix_tensor, var_conv_2d, sequence_topk_avg_pooling):
outputs and gradients against Fluid 1.8.5 (data/fluid18_text_matching.py), numeric gradients."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

G = np.load(Path(__file__).parent / "data" / "fluid18_text_matching.npz")
C = fluid.contrib
XL, YL = [2, 3, 1], [1, 3, 2]


def _lens(off):
    return np.diff(off).tolist()


def _f64(name):
    return G[name].astype("float64")


VC_ROWS, VC_COLS = G["vc_rows"].tolist(), G["vc_cols"].tolist()
TK_ROWS, TK_COLS = G["tk_rows"].tolist(), G["tk_cols"].tolist()
VC_ATTRS = {"InputChannel": 2, "OutputChannel": 3, "KernelH": 3, "KernelW": 2}
VC_ATTRS.update(StrideH=2, StrideW=1)

CASES = [
    OpCase(
        "match_matrix_tensor",
        {"X": _f64("mm_x"), "Y": _f64("mm_y"), "W": _f64("mm_w")},
        {"dim_t": 2},
        ref=lambda **_: {"Out": G["mm_out"], "Tmp": G["mm_tmp"]},
        grad=["X", "Y", "W"],
        grad_outputs=["Out"],
        lod={"x_0": [XL], "y_0": [YL]},
    ),
    OpCase(
        "var_conv_2d",
        {
            "X": _f64("vc_x"),
            "ROW": np.zeros((sum(VC_ROWS), 1)),
            "COLUMN": np.zeros((sum(VC_COLS), 1)),
            "W": _f64("vc_w"),
        },
        VC_ATTRS,
        ref=lambda **_: {"Out": G["vc_out"], "Col": G["vc_col"]},
        grad=["X", "W"],
        grad_outputs=["Out"],
        lod={
            "x_0": [[2 * r * c for r, c in zip(VC_ROWS, VC_COLS)]],
            "row_0": [VC_ROWS],
            "column_0": [VC_COLS],
        },
    ),
    OpCase(
        "sequence_topk_avg_pooling",
        {
            "X": _f64("tk_x"),
            "ROW": np.zeros((sum(TK_ROWS), 1)),
            "COLUMN": np.zeros((sum(TK_COLS), 1)),
        },
        {"topks": [1, 3, 5], "channel_num": 2},
        ref=lambda **_: {"Out": G["tk_out"], "pos": G["tk_pos"]},
        grad=["X"],
        grad_outputs=["Out"],
        lod={
            "x_0": [[2 * r * c for r, c in zip(TK_ROWS, TK_COLS)]],
            "row_0": [TK_ROWS],
            "column_0": [TK_COLS],
        },
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_text_matching(case):
    check_case(case)


def _lod(v, lens):
    return fluid.create_lod_tensor(v, [lens], fluid.CPUPlace())


def _run(build, feed):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        out, fetch = build()
        r = fluid.data("r", [None, out.shape[1]])
        fluid.backward.append_backward(fluid.layers.reduce_sum(out * r))
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    return exe.run(main, feed=feed, fetch_list=[out, *fetch], scope=scope, return_numpy=False)


def _data(name, width, grad=True):
    v = fluid.data(name, [None, width], lod_level=1)
    v.stop_gradient = not grad
    return v


def _init(name):
    return fluid.ParamAttr(name="w", initializer=fluid.initializer.NumpyArrayInitializer(G[name]))


def test_match_matrix_tensor_layer_matches_fluid18():
    def build():
        out, tmp = C.match_matrix_tensor(_data("x", 3), _data("y", 3), 2, param_attr=_init("mm_w"))
        return out, [tmp, "x@GRAD", "y@GRAD", "w@GRAD"]

    feed = {"x": _lod(G["mm_x"], XL), "y": _lod(G["mm_y"], YL), "r": G["mm_r"]}
    out, tmp, dx, dy, dw = _run(build, feed)
    assert out.lod() == [G["mm_out_lod"].tolist()]
    for got, key in [(out, "out"), (tmp, "tmp"), (dx, "dx"), (dy, "dy"), (dw, "dw")]:
        np.testing.assert_allclose(np.array(got), G[f"mm_{key}"], rtol=1e-5, atol=1e-6)


def test_var_conv_2d_layer_matches_fluid18():
    def build():
        x, row, col = _data("x", 1), _data("row", 1, False), _data("col", 1, False)
        out = C.var_conv_2d(x, row, col, 2, 3, [3, 2], [2, 1], param_attr=_init("vc_w"))
        return out, ["x@GRAD", "w@GRAD"]

    feed = {
        "x": _lod(G["vc_x"], [2 * r * c for r, c in zip(VC_ROWS, VC_COLS)]),
        "row": _lod(np.zeros((sum(VC_ROWS), 1), "float32"), VC_ROWS),
        "col": _lod(np.zeros((sum(VC_COLS), 1), "float32"), VC_COLS),
        "r": G["vc_r"],
    }
    out, dx, dw = _run(build, feed)
    assert out.lod() == [G["vc_out_lod"].tolist()]
    for got, key in [(out, "out"), (dx, "dx"), (dw, "dw")]:
        np.testing.assert_allclose(np.array(got), G[f"vc_{key}"], rtol=1e-5, atol=1e-6)


def test_sequence_topk_avg_pooling_layer_matches_fluid18():
    def build():
        x, row, col = _data("x", 1), _data("row", 1, False), _data("col", 1, False)
        return C.sequence_topk_avg_pooling(x, row, col, [1, 3, 5], 2), ["x@GRAD"]

    feed = {
        "x": _lod(G["tk_x"], [2 * r * c for r, c in zip(TK_ROWS, TK_COLS)]),
        "row": _lod(np.zeros((sum(TK_ROWS), 1), "float32"), TK_ROWS),
        "col": _lod(np.zeros((sum(TK_COLS), 1), "float32"), TK_COLS),
        "r": G["tk_r"],
    }
    out, dx = _run(build, feed)
    assert out.lod() == [G["tk_out_lod"].tolist()]
    np.testing.assert_allclose(np.array(out), G["tk_out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(dx), G["tk_dx"], rtol=1e-5, atol=1e-6)


def test_text_matching_layers_check_their_arguments():
    import inspect

    assert list(inspect.signature(C.var_conv_2d).parameters) == [
        "input", "row", "col", "input_channel", "output_channel", "filter_size", "stride",
        "param_attr", "act", "dtype", "name",
    ]  # fmt: skip
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x, y4 = _data("x", 3), _data("y", 4)
        with pytest.raises(OarError, match="same h"):
            C.match_matrix_tensor(x, y4, 2)
        with pytest.raises(OarError, match="LoD"):
            C.match_matrix_tensor(fluid.data("p", [None, 3]), x, 2)
        with pytest.raises(OarError, match="filter_size"):
            C.var_conv_2d(x, x, x, 1, 1, [3, 0])
        with pytest.raises(OarError, match="topks"):
            C.sequence_topk_avg_pooling(x, x, x, [], 1)
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x, row, col = _data("x", 1), _data("row", 1, False), _data("col", 1, False)
        out = C.sequence_topk_avg_pooling(x, row, col, [1], 2)
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {
        "x": _lod(np.zeros((5, 1), "float32"), [5]),
        "row": _lod(np.zeros((1, 1), "float32"), [1]),
        "col": _lod(np.zeros((2, 1), "float32"), [2]),
    }
    with pytest.raises(OarError, match="values per instance"):
        exe.run(main, feed=feed, fetch_list=[out])
