"""Shared by the fluid18_pool_*.py golden-data scripts (run with the Fluid 1.8.5 oracle)."""

import numpy as np
import paddle.fluid as fluid


def run(fn, xv, grad=True):
    """Outputs of ``fn(x)`` for ``x = xv``, then (``grad``) the gradient of ``x`` for an output
    gradient ``1, 2, 3, ...`` (row-major) of the first output."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", list(xv.shape), "float32")
        x.stop_gradient = False
        outs = list(fn(x))
        y = outs[0]
        dy = np.arange(1, int(np.prod(y.shape)) + 1).reshape(y.shape).astype("float32")
        loss = fluid.layers.reduce_sum(y * fluid.layers.assign(dy))
        grads = fluid.gradients([loss], [x]) if grad else []
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    return exe.run(main, feed={"x": xv}, fetch_list=outs + grads)
