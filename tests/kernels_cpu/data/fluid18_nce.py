"""Golden data for nce (negatives fixed with the op's custom_neg_classes attr): run with the
Fluid 1.8.5 oracle.

    $FLUID18_PYTHON tests/kernels_cpu/data/fluid18_nce.py
"""

import os

import numpy as np
import paddle.fluid as fluid

rng = np.random.RandomState(6)
N, Dm, C = 3, 4, 7
x = rng.uniform(-1, 1, (N, Dm)).astype("float32")
lab = np.array([[1], [4], [6]], "int64")
w = rng.uniform(-1, 1, (C, Dm)).astype("float32")
b = rng.uniform(-1, 1, (C, 1)).astype("float32")
main, st = fluid.Program(), fluid.Program()
with fluid.program_guard(main, st):
    xv = fluid.data("x", [None, Dm], "float32")
    xv.stop_gradient = False
    lv = fluid.data("l", [None, 1], "int64")
    init = fluid.initializer.NumpyArrayInitializer
    cost = fluid.layers.nce(
        xv,
        lv,
        C,
        param_attr=fluid.ParamAttr("w", initializer=init(w)),
        bias_attr=fluid.ParamAttr("b", initializer=init(b)),
        num_neg_samples=3,
    )
    op = [o for o in main.global_block().ops if o.type == "nce"][0]
    op._set_attr("custom_neg_classes", [0, 2, 5])
    block = main.global_block()
    g = fluid.gradients([fluid.layers.reduce_sum(cost)], [xv, block.var("w"), block.var("b")])
exe = fluid.Executor(fluid.CPUPlace())
exe.run(st)
r = exe.run(main, feed={"x": x, "l": lab}, fetch_list=[cost] + g)
here = os.path.dirname(os.path.abspath(__file__))
np.savez(
    os.path.join(here, "fluid18_nce.npz"),
    x=x,
    label=lab,
    w=w,
    b=b,
    cost=r[0],
    dx=r[1],
    dw=r[2],
    db=r[3],
)
