"""dynamic_lstmp outputs and gradients from the real Fluid 1.8.5, as golden data.

``run(fluid)`` builds the same programs with either framework from the same seeded inputs
and weights. Regenerate with the oracle:
``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_lstmp.py``
(writes ``fluid18_lstmp.npz`` next to this file).
"""

import os

import numpy as np

H, P = 3, 2
LENS = [2, 4, 1]
CONFIGS = [  # use_peepholes, is_reverse, with h_0/c_0, cell_clip, proj_clip
    (True, False, True, 0.8, 0.5),
    (False, True, False, None, None),
    (True, True, True, None, None),
]


def run(fluid):
    rng = np.random.RandomState(0)
    place = fluid.CPUPlace()
    values = []
    for k, (peep, rev, init, cc, pc) in enumerate(CONFIGS):
        main, startup = fluid.Program(), fluid.Program()
        feed = {}
        with fluid.program_guard(main, startup):
            x = fluid.data("x", [None, 4 * H], "float32", lod_level=1)
            x.stop_gradient = False
            xv = rng.uniform(-1, 1, (sum(LENS), 4 * H)).astype("float32")
            feed["x"] = fluid.create_lod_tensor(xv, [LENS], place)
            kw, wrt = {}, ["x"]
            if init:
                h0 = fluid.data("h0", [None, P], "float32")
                c0 = fluid.data("c0", [None, H], "float32")
                h0.stop_gradient = c0.stop_gradient = False
                feed["h0"] = rng.uniform(-1, 1, (len(LENS), P)).astype("float32")
                feed["c0"] = rng.uniform(-1, 1, (len(LENS), H)).astype("float32")
                kw = {"h_0": h0, "c_0": c0}
                wrt += ["h0", "c0"]
            proj, cell = fluid.layers.dynamic_lstmp(
                x, 4 * H, P, use_peepholes=peep, is_reverse=rev, cell_clip=cc, proj_clip=pc,
                name=f"lstmp{k}", **kw,
            )  # fmt: skip
            coef = fluid.layers.assign(rng.uniform(0.5, 1.5, (sum(LENS), P)).astype("float32"))
            loss = fluid.layers.reduce_sum(fluid.layers.elementwise_mul(proj, coef))
            params = main.global_block().all_parameters()
            fluid.backward.append_backward(loss)
        exe = fluid.Executor(place)
        scope = fluid.Scope()
        with fluid.scope_guard(scope):
            exe.run(startup)
            for p in params:
                value = rng.uniform(-0.8, 0.8, p.shape).astype("float32")
                scope.find_var(p.name).get_tensor().set(value, place)
            fetch = [proj, cell] + [n + "@GRAD" for n in wrt] + [p.name + "@GRAD" for p in params]
            out = exe.run(main, feed=feed, fetch_list=fetch, return_numpy=False)
        values += [np.array(v) for v in out]
    return values


if __name__ == "__main__":
    import paddle.fluid as fluid

    values = run(fluid)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_lstmp.npz")
    np.savez(path, *values)
    print("wrote", path, len(values), "arrays")
