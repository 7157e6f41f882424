"""Golden data for center_loss: run with the Fluid 1.8.5 oracle (two steps, centres updated).

$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_center_loss.py
"""

import os

import numpy as np
import paddle.fluid as fluid

rng = np.random.RandomState(4)
x = rng.rand(4, 3).astype("float32")
lab = np.array([[0], [2], [0], [1]], "int64")
c0 = rng.rand(3, 3).astype("float32")
main, st = fluid.Program(), fluid.Program()
with fluid.program_guard(main, st):
    xv = fluid.data("x", [None, 3], "float32")
    xv.stop_gradient = False
    lv = fluid.data("l", [None, 1], "int64")
    init = fluid.initializer.NumpyArrayInitializer(c0)
    loss = fluid.layers.center_loss(xv, lv, 3, 0.1, fluid.ParamAttr("c", initializer=init), True)
    g = fluid.gradients([fluid.layers.reduce_sum(loss)], [xv])
exe = fluid.Executor(fluid.CPUPlace())
exe.run(st)
for _ in range(2):
    lv2, gx = exe.run(main, feed={"x": x, "l": lab}, fetch_list=[loss] + g)
c_final = np.array(fluid.global_scope().find_var("c").get_tensor())
here = os.path.dirname(os.path.abspath(__file__))
np.savez(
    os.path.join(here, "fluid18_center_loss.npz"),
    x=x,
    label=lab,
    c0=c0,
    c_final=c_final,
    loss2=lv2,
    gx2=gx,
)
