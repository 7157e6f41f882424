"""chunk_eval golden data from the real Fluid 1.8.5: random tag sequences for every scheme,
with and without excluded chunk types. Regenerate with the oracle:
``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_chunk_eval.py > tests/kernels_cpu/data/fluid18_chunk_eval.json``
"""

import json

import numpy as np
import paddle.fluid as fluid

place = fluid.CPUPlace()
rs = np.random.RandomState(5)
res = []
cases = []
for scheme, npos in [("IOB", 2), ("IOE", 2), ("IOBES", 4), ("plain", 1)]:
    for excl in [None, [1]]:
        main, start = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, start):
            x = fluid.data("x", [None, 1], "int64", lod_level=1)
            y = fluid.data("y", [None, 1], "int64", lod_level=1)
            outs = fluid.layers.chunk_eval(x, y, scheme, 3, excluded_chunk_types=excl)
        exe = fluid.Executor(place)
        xv = rs.randint(0, 3 * npos + 1, (40, 1)).astype("int64")
        yv = rs.randint(0, 3 * npos + 1, (40, 1)).astype("int64")
        r = exe.run(
            main,
            feed={
                "x": fluid.create_lod_tensor(xv, [[15, 5, 20]], place),
                "y": fluid.create_lod_tensor(yv, [[15, 5, 20]], place),
            },
            fetch_list=list(outs),
        )
        cases.append(
            dict(
                scheme=scheme,
                excl=excl,
                x=xv.ravel().tolist(),
                y=yv.ravel().tolist(),
                out=[float(np.array(v).ravel()[0]) for v in r],
            )
        )
print(json.dumps(cases))
