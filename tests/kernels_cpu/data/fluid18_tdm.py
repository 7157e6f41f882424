"""Golden data for tdm_child and tdm_sampler (its deterministic part: no negatives, and the
output shapes): run under Fluid 1.8.5 (``python fluid18_tdm.py``) to
regenerate fluid18_tdm.json next to this file."""

import json
import os

import numpy as np
import paddle.fluid as fluid

CASES = [
    {  # Fluid's documented binary tree; node 0 is padding
        "tree": [
            [0, 0, 0, 1, 2],
            [0, 1, 0, 3, 4],
            [0, 1, 0, 5, 6],
            [0, 2, 1, 0, 0],
            [1, 2, 1, 0, 0],
            [2, 2, 2, 0, 0],
            [3, 2, 2, 0, 0],
        ],
        "x": [[0], [1], [2], [3], [6]],
        "child_nums": 2,
    },
    {  # three children at most, a childless inner node with an item, 2 ids per row
        "tree": [
            [0, 0, 0, 1, 2, 0],
            [0, 1, 0, 3, 4, 7],
            [9, 1, 0, 0, 0, 0],
            [0, 2, 1, 0, 0, 0],
            [1, 2, 1, 0, 0, 0],
            [2, 2, 2, 0, 0, 0],
            [3, 2, 2, 0, 0, 0],
            [5, 2, 1, 0, 0, 0],
        ],
        "x": [[0, 1], [2, 3], [1, 7]],
        "child_nums": 3,
    },
]

for case in CASES:
    tree = np.array(case["tree"], "int32")
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, len(case["x"][0])], "int32")
        init = fluid.initializer.NumpyArrayInitializer(tree)
        child, leaf = fluid.contrib.tdm_child(
            x, tree.shape[0], case["child_nums"], param_attr=fluid.ParamAttr(initializer=init)
        )
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    c, m = exe.run(main, feed={"x": np.array(case["x"], "int32")}, fetch_list=[child, leaf])
    case.update(child=c.tolist(), leaf_mask=m.tolist())

TRAVEL = [[1, 3], [1, 4], [2, 5], [2, 0]]  # leaf 3's path ends early (an unbalanced tree)
LAYER = [[1], [2], [3], [4], [5], [6]]
SAMPLER = {"travel": TRAVEL, "layer": LAYER, "x": [[0], [1], [2], [3]], "runs": []}
for neg, positive, as_list in [([0, 0], True, False), ([1, 2], False, True), ([1, 3], True, True)]:
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 1], "int32")
        res = fluid.contrib.tdm_sampler(
            x,
            neg,
            [2, 4],
            4,
            tree_travel_attr=fluid.ParamAttr(
                initializer=fluid.initializer.NumpyArrayInitializer(np.array(TRAVEL, "int32"))
            ),
            tree_layer_attr=fluid.ParamAttr(
                initializer=fluid.initializer.NumpyArrayInitializer(np.array(LAYER, "int32"))
            ),
            output_positive=positive,
            output_list=as_list,
            seed=0,
        )
        flat = [v for group in res for v in (group if isinstance(group, list) else [group])]
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    values = exe.run(main, feed={"x": np.array(SAMPLER["x"], "int32")}, fetch_list=flat)
    SAMPLER["runs"].append(
        {
            "neg": neg,
            "positive": positive,
            "as_list": as_list,
            "shapes": [list(v.shape) for v in flat],
            "values": [v.tolist() for v in values] if neg == [0, 0] else None,
        }
    )

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_tdm.json"), "w") as f:
    json.dump({"child": CASES, "sampler": SAMPLER}, f)
