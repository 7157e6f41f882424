"""The hash op's numbers from the real Fluid 1.8.5 (appended directly: Fluid 1.8.5's
layers.hash cannot be called). Regenerate with the oracle:
``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_hash.py`` (writes fluid18_hash.json).
"""

import json
import os

import numpy as np

X = [[1, 2], [3, 4], [5, 6], [-7, 2**30], [0, 0]]
LENS = [2, 3]
NUM_HASH, MOD_BY = 3, 1000


def run(fluid):
    out = {}
    for dt in ("int32", "int64"):
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup):
            x = fluid.data("x", [None, 2], dt, lod_level=1)
            o = main.global_block().create_var(name="out", dtype="int64")
            main.global_block().append_op(
                type="hash", inputs={"X": x}, outputs={"Out": o},
                attrs={"num_hash": NUM_HASH, "mod_by": MOD_BY},
            )  # fmt: skip
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup)
        feed = {"x": fluid.create_lod_tensor(np.array(X, dt), [LENS], fluid.CPUPlace())}
        (r,) = exe.run(main, feed=feed, fetch_list=[o], return_numpy=False)
        out[dt] = {"out": np.array(r).tolist(), "lod": [list(map(int, lv)) for lv in r.lod()]}
    return out


if __name__ == "__main__":
    import paddle.fluid as fluid

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_hash.json")
    with open(path, "w") as f:
        json.dump(run(fluid), f)
    print("wrote", path)
