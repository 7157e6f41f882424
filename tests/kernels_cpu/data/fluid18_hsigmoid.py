"""Golden data for hsigmoid (default and custom trees): run with the Fluid 1.8.5 oracle.

$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_hsigmoid.py
"""

import os

import numpy as np
import paddle.fluid as fluid

rng = np.random.RandomState(2)
N, Dm, C = 4, 3, 6
x = rng.uniform(-1, 1, (N, Dm)).astype("float32")
lab = np.array([[0], [5], [2], [3]], "int64")
w = rng.uniform(-1, 1, (C - 1, Dm)).astype("float32")
b = rng.uniform(-1, 1, (C - 1, 1)).astype("float32")
pt = np.array([[0, 1, -1], [0, 2, 3], [0, 1, -1], [0, 2, 4]], "int64")
pc = np.array([[1, 0, -1], [0, 1, 1], [1, 1, -1], [0, 0, 1]], "int64")
res = {}
for custom in (False, True):
    main, st = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, st):
        xv = fluid.data("x", [None, Dm], "float32")
        xv.stop_gradient = False
        lv = fluid.data("l", [None, 1], "int64")
        kw = {}
        if custom:
            kw = dict(
                path_table=fluid.data("pt", [None, 3], "int64"),
                path_code=fluid.data("pc", [None, 3], "int64"),
                is_custom=True,
            )
        init = fluid.initializer.NumpyArrayInitializer
        out = fluid.layers.hsigmoid(
            xv,
            lv,
            C - 1 if custom else C,
            param_attr=fluid.ParamAttr("w", initializer=init(w)),
            bias_attr=fluid.ParamAttr("b", initializer=init(b)),
            **kw,
        )
        loss = fluid.layers.reduce_sum(out)
        block = main.global_block()
        g = fluid.gradients([loss], [xv, block.var("w"), block.var("b")])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(st)
    r = exe.run(main, feed={"x": x, "l": lab, "pt": pt, "pc": pc}, fetch_list=[out] + g)
    tag = "custom" if custom else "default"
    for k, v in zip(("out", "dx", "dw", "db"), r):
        res[f"{tag}_{k}"] = np.asarray(v)
here = os.path.dirname(os.path.abspath(__file__))
np.savez(
    os.path.join(here, "fluid18_hsigmoid.npz"),
    x=x,
    label=lab,
    w=w,
    b=b,
    path_table=pt,
    path_code=pc,
    **res,
)
