"""Golden data for the contrib text-matching ops (match_matrix_tensor, var_conv_2d,
sequence_topk_avg_pooling): run under Fluid 1.8.5 (``python fluid18_text_matching.py``)
to regenerate fluid18_text_matching.npz next to this file.

Each op's output and the gradients of ``sum(out * R)`` (R random) for its inputs and weight.
"""

import os

import numpy as np
import paddle.fluid as fluid

rng = np.random.RandomState(2024)
OUT = {}
XL, YL = [2, 3, 1], [1, 3, 2]
H, DIM_T = 3, 2


def lod(v, lens):
    return fluid.create_lod_tensor(v, [lens], fluid.CPUPlace())


def run(build, feeds, fetch_names):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        fetch = build()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(start)
        res = exe.run(main, feed=feeds, fetch_list=fetch, return_numpy=False)
    return [np.array(r) for r in res], [r.lod() for r in res]


def data(name, width, lod_level=1, grad=True):
    v = fluid.data(name, [None, width], lod_level=lod_level)
    v.stop_gradient = not grad
    return v


# match_matrix_tensor -------------------------------------------------------------------
xv = rng.uniform(-1, 1, (sum(XL), H)).astype("float32")
yv = rng.uniform(-1, 1, (sum(YL), H)).astype("float32")
W = rng.uniform(-1, 1, (H, DIM_T, H)).astype("float32")
n_out = sum(DIM_T * a * b for a, b in zip(XL, YL))
R = rng.uniform(-1, 1, (n_out, 1)).astype("float32")


def build_mm():
    x, y = data("x", H), data("y", H)
    r = fluid.data("r", [None, 1])
    w = fluid.ParamAttr(name="w", initializer=fluid.initializer.NumpyArrayInitializer(W))
    out, tmp = fluid.contrib.match_matrix_tensor(x, y, DIM_T, param_attr=w)
    loss = fluid.layers.reduce_sum(out * r)
    fluid.backward.append_backward(loss)
    return [out, tmp, "x@GRAD", "y@GRAD", "w@GRAD"]


(o, t, dx, dy, dw), lods = run(build_mm, {"x": lod(xv, XL), "y": lod(yv, YL), "r": R}, None)
OUT.update(mm_x=xv, mm_y=yv, mm_w=W, mm_r=R, mm_out=o, mm_tmp=t, mm_dx=dx, mm_dy=dy, mm_dw=dw)
OUT["mm_out_lod"] = np.array(lods[0][0])

# var_conv_2d ---------------------------------------------------------------------------
ROWS, COLS, CIN, COUT, KH, KW, SH, SW = [2, 3, 0, 4], [1, 3, 2, 3], 2, 3, 3, 2, 2, 1
ilens = [CIN * a * b for a, b in zip(ROWS, COLS)]
iv = rng.uniform(-1, 1, (sum(ilens), 1)).astype("float32")
rowv = rng.uniform(-1, 1, (sum(ROWS), 1)).astype("float32")
colv = rng.uniform(-1, 1, (sum(COLS), 1)).astype("float32")
VW = rng.uniform(-1, 1, (COUT, CIN * KH * KW)).astype("float32")
olens = [
    COUT * ((a - 1) // SH + 1) * ((b - 1) // SW + 1) if a and b else 0 for a, b in zip(ROWS, COLS)
]
VR = rng.uniform(-1, 1, (sum(olens), 1)).astype("float32")


def build_vc():
    x = data("x", 1)
    row, col = data("row", 1, grad=False), data("col", 1, grad=False)
    r = fluid.data("r", [None, 1])
    w = fluid.ParamAttr(name="w", initializer=fluid.initializer.NumpyArrayInitializer(VW))
    out = fluid.contrib.var_conv_2d(x, row, col, CIN, COUT, [KH, KW], [SH, SW], param_attr=w)
    loss = fluid.layers.reduce_sum(out * r)
    fluid.backward.append_backward(loss)
    col_name = [op for op in out.block.ops if op.type == "var_conv_2d"][0].output("Col")[0]
    return [out, col_name, "x@GRAD", "w@GRAD"]


feeds = {"x": lod(iv, ilens), "row": lod(rowv, ROWS), "col": lod(colv, COLS), "r": VR}
(o, c, dx, dw), lods = run(build_vc, feeds, None)
OUT.update(vc_x=iv, vc_w=VW, vc_r=VR, vc_out=o, vc_col=c, vc_dx=dx, vc_dw=dw)
OUT.update(vc_rows=np.array(ROWS), vc_cols=np.array(COLS), vc_out_lod=np.array(lods[0][0]))

# sequence_topk_avg_pooling -------------------------------------------------------------
TR, TC, CH, TOPKS = [2, 3, 1], [4, 3, 2], 2, [1, 3, 5]
tlens = [CH * a * b for a, b in zip(TR, TC)]
tv = rng.uniform(-1, 1, (sum(tlens), 1)).astype("float32")
TRV = rng.uniform(-1, 1, (sum(TR), CH * len(TOPKS))).astype("float32")


def build_tk():
    x = data("x", 1)
    row, col = data("row", 1, grad=False), data("col", 1, grad=False)
    r = fluid.data("r", [None, CH * len(TOPKS)])
    out = fluid.contrib.sequence_topk_avg_pooling(x, row, col, TOPKS, CH)
    loss = fluid.layers.reduce_sum(out * r)
    fluid.backward.append_backward(loss)
    pos = [op for op in out.block.ops if op.type == "sequence_topk_avg_pooling"][0].output("pos")[0]
    return [out, pos, "x@GRAD"]


rv = rng.uniform(-1, 1, (sum(TR), 1)).astype("float32")
cv = rng.uniform(-1, 1, (sum(TC), 1)).astype("float32")
feeds = {"x": lod(tv, tlens), "row": lod(rv, TR), "col": lod(cv, TC), "r": TRV}
(o, pos, dx), lods = run(build_tk, feeds, None)
OUT.update(tk_x=tv, tk_r=TRV, tk_out=o, tk_pos=pos, tk_dx=dx, tk_out_lod=np.array(lods[0][0]))
OUT.update(tk_rows=np.array(TR), tk_cols=np.array(TC))

np.savez(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_text_matching.npz"), **OUT
)
print({k: v.shape for k, v in OUT.items()})
