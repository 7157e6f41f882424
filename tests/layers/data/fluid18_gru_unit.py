"""fluid.layers.gru_unit outputs and gradients from the real Fluid 1.8.5, as golden data.
Regenerate with the oracle: ``$FLUID18_PYTHON tests/layers/data/fluid18_gru_unit.py``
(writes ``fluid18_gru_unit.npz``)."""

import os

import numpy as np

D = 3


def run(fluid):
    rng = np.random.RandomState(0)
    values = []
    for origin in (False, True):
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup):
            x = fluid.data("x", [None, 3 * D], "float32")
            h = fluid.data("h", [None, D], "float32")
            x.stop_gradient = h.stop_gradient = False
            hid, reset, gate = fluid.layers.gru_unit(x, h, 3 * D, origin_mode=origin)
            loss = fluid.layers.reduce_sum(hid)
            params = main.global_block().all_parameters()
            fluid.backward.append_backward(loss)
        exe = fluid.Executor(fluid.CPUPlace())
        scope = fluid.Scope()
        with fluid.scope_guard(scope):
            exe.run(startup)
            for p in params:
                value = rng.uniform(-0.6, 0.6, p.shape).astype("float32")
                scope.find_var(p.name).get_tensor().set(value, fluid.CPUPlace())
            xv = rng.uniform(-1, 1, (2, 3 * D)).astype("float32")
            hv = rng.uniform(-1, 1, (2, D)).astype("float32")
            fetch = [hid, reset, gate, "x@GRAD", "h@GRAD"] + [p.name + "@GRAD" for p in params]
            values += [
                np.array(v) for v in exe.run(main, feed={"x": xv, "h": hv}, fetch_list=fetch)
            ]
    return values


if __name__ == "__main__":
    import paddle.fluid as fluid

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_gru_unit.npz")
    np.savez(path, *run(fluid))
    print("wrote", path)
