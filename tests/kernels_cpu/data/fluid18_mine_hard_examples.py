"""Golden data for mine_hard_examples(mining_type="hard_example"): run with Fluid 1.8.5.

    $FLUID18_PYTHON tests/kernels_cpu/data/fluid18_mine_hard_examples.py

Writes fluid18_mine_hard_examples.npz next to this file: the inputs and, per case, the
negative indices (with their LoD) and the updated match indices.
"""

import os

import numpy as np

N, P = 3, 12
CASES = {  # name: (with LocLoss, sample_size, neg_dist_threshold)
    "cls": (False, 4, 0.5),
    "cls_loc": (True, 5, 0.5),
    "big_sample": (True, 20, 0.3),
}


def inputs():
    rng = np.random.RandomState(17)
    match = np.full((N, P), -1, "int32")
    match[0, [1, 4, 7]] = [0, 1, 2]
    match[1, [0, 6]] = [0, 1]
    match[2, [2, 3, 9, 11]] = [0, 0, 1, 2]
    return {
        "cls": rng.rand(N, P).astype("float32"),
        "loc": rng.rand(N, P).astype("float32"),
        "match": match,
        "dist": rng.rand(N, P).astype("float32"),
    }


if __name__ == "__main__":
    import paddle.fluid as fluid
    from paddle.fluid.layer_helper import LayerHelper

    data = inputs()
    out = dict(data)
    for name, (with_loc, sample, thr) in CASES.items():
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup):
            v = {k: fluid.data(k, [N, P], a.dtype.name) for k, a in data.items()}
            helper = LayerHelper("mine_hard_examples")
            neg = helper.create_variable_for_type_inference("int32")
            upd = helper.create_variable_for_type_inference("int32")
            ins = {"ClsLoss": v["cls"], "MatchIndices": v["match"], "MatchDist": v["dist"]}
            if with_loc:
                ins["LocLoss"] = v["loc"]
            attrs = {"mining_type": "hard_example", "sample_size": sample,
                     "neg_dist_threshold": thr, "neg_pos_ratio": 1.0}  # fmt: skip
            helper.append_op(type="mine_hard_examples", inputs=ins,
                             outputs={"NegIndices": neg, "UpdatedMatchIndices": upd}, attrs=attrs)  # fmt: skip
        exe = fluid.Executor(fluid.CPUPlace())
        res = exe.run(main, feed=data, fetch_list=[neg, upd], return_numpy=False)
        out[name + "_neg"] = np.array(res[0])
        out[name + "_neg_lod"] = np.array(res[0].lod()[-1], "int64")
        out[name + "_updated"] = np.array(res[1])
    here = os.path.dirname(os.path.abspath(__file__))
    np.savez(os.path.join(here, "fluid18_mine_hard_examples.npz"), **out)
