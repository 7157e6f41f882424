"""beam_search / beam_search_decode numbers from the real Fluid 1.8.5, as golden data.

A numpy "model" gives every live prefix a random distribution over V words; each step runs
Fluid's beam_search op (one-op program, LoD inputs fed) on the accumulated top-k scores, as
Fluid's machine-translation book does, and the steps' selected ids and scores are then fed
to beam_search_decode through two tensor arrays. Regenerate with the oracle:
``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_beam_search.py``
(writes ``fluid18_beam_search.npz``: per step k ``pre_ids_k``, ``pre_scores_k``, ``ids_k``,
``scores_k``, ``lod_k`` (offsets of the two levels, -1 separated), ``sel_ids_k``,
``sel_scores_k``, ``parent_k``, ``sel_lod_k``; then ``sent_ids``, ``sent_scores``,
``sent_lod``).
"""

import os

import numpy as np

BATCH, BEAM, V, END, STEPS = 3, 2, 5, 1, 4


def pack_lod(lod):
    out = []
    for level in lod:
        out += list(level) + [-1]
    return np.array(out, dtype="int64")


def unpack_lod(packed):
    lod, cur = [], []
    for v in packed.tolist():
        if v == -1:
            lod.append(cur)
            cur = []
        else:
            cur.append(int(v))
    return lod


def offsets_to_lengths(lod):
    return [[b - a for a, b in zip(level[:-1], level[1:])] for level in lod]


def beam_step(fluid, pre_ids, pre_scores, ids, scores, lod):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        pi = fluid.data("pre_ids", [None, 1], "int64", lod_level=2)
        ps = fluid.data("pre_scores", [None, 1], "float32", lod_level=2)
        ii = fluid.data("ids", [None, BEAM], "int64", lod_level=2)
        ss = fluid.data("scores", [None, BEAM], "float32", lod_level=2)
        sel_ids, sel_scores, parent = fluid.layers.beam_search(
            pi, ps, ii, ss, beam_size=BEAM, end_id=END, level=0, return_parent_idx=True
        )
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    place = fluid.CPUPlace()
    lens = offsets_to_lengths(lod)
    feed = {
        "pre_ids": fluid.create_lod_tensor(pre_ids, lens, place),
        "pre_scores": fluid.create_lod_tensor(pre_scores, lens, place),
        "ids": fluid.create_lod_tensor(ids, lens, place),
        "scores": fluid.create_lod_tensor(scores, lens, place),
    }
    a, b, c = exe.run(main, feed=feed, fetch_list=[sel_ids, sel_scores, parent], return_numpy=False)
    return np.array(a), np.array(b), np.array(c), a.lod()


def decode(fluid, steps):
    main, startup = fluid.Program(), fluid.Program()
    place = fluid.CPUPlace()
    feed = {}
    with fluid.program_guard(main, startup):
        ids_arr = fluid.layers.create_array("int64")
        sc_arr = fluid.layers.create_array("float32")
        for k, (ids, scores, lod) in enumerate(steps):
            i = fluid.layers.fill_constant([1], "int64", k)
            iv = fluid.data(f"i{k}", [None, 1], "int64", lod_level=2)
            sv = fluid.data(f"s{k}", [None, 1], "float32", lod_level=2)
            fluid.layers.array_write(iv, i, array=ids_arr)
            fluid.layers.array_write(sv, i, array=sc_arr)
            lens = offsets_to_lengths(lod)
            feed[f"i{k}"] = fluid.create_lod_tensor(ids, lens, place)
            feed[f"s{k}"] = fluid.create_lod_tensor(scores, lens, place)
        sid, ssc = fluid.layers.beam_search_decode(ids_arr, sc_arr, beam_size=BEAM, end_id=END)
    exe = fluid.Executor(place)
    exe.run(startup)
    a, b = exe.run(main, feed=feed, fetch_list=[sid, ssc], return_numpy=False)
    return np.array(a), np.array(b), a.lod()


def generate(fluid):
    rng = np.random.RandomState(7)
    out = {}
    pre_ids = np.zeros((BATCH, 1), "int64")
    pre_scores = np.zeros((BATCH, 1), "float32")
    lod = [list(range(BATCH + 1)), list(range(BATCH + 1))]
    steps = [(pre_ids, pre_scores, lod)]
    for k in range(STEPS):
        probs = rng.dirichlet(np.ones(V), size=len(pre_ids)).astype("float32")
        if k == 1:
            probs[0] = 0.01 / (V - 1)
            probs[0, END] = 0.99  # one branch ends early
        ids = np.argsort(-probs, axis=1)[:, :BEAM].astype("int64")
        scores = (pre_scores + np.log(np.take_along_axis(probs, ids, axis=1))).astype("float32")
        sel_ids, sel_scores, parent, sel_lod = beam_step(
            fluid, pre_ids, pre_scores, ids, scores, lod
        )
        for name, v in (
            ("pre_ids", pre_ids),
            ("pre_scores", pre_scores),
            ("ids", ids),
            ("scores", scores),
            ("lod", pack_lod(lod)),
            ("sel_ids", sel_ids),
            ("sel_scores", sel_scores),
            ("parent", parent),
            ("sel_lod", pack_lod(sel_lod)),
        ):
            out[f"{name}_{k}"] = v
        steps.append((sel_ids, sel_scores, sel_lod))
        pre_ids, pre_scores, lod = sel_ids, sel_scores, [list(x) for x in sel_lod]
        if not len(pre_ids):
            break
    sid, ssc, slod = decode(fluid, [(s[0], s[1], s[2]) for s in steps])
    out["sent_ids"], out["sent_scores"], out["sent_lod"] = sid, ssc, pack_lod(slod)
    out["steps"] = np.array(len(steps) - 1)
    return out


if __name__ == "__main__":
    import paddle.fluid as fluid

    values = generate(fluid)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_beam_search.npz")
    np.savez(path, **values)
    for k, v in values.items():
        print(k, v.tolist())
