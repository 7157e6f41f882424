"""beam_search / beam_search_decode layers: Fluid 1.8.5's signatures, an unrolled decode
built from layers, and bad input naming the layer."""

import inspect

import numpy as np
import pytest
from oar import fluid


def _plain(fn):
    """The signature without annotations, as Fluid 1.8.5 prints it."""
    sig = inspect.signature(fn)
    return str(
        sig.replace(
            parameters=[p.replace(annotation=p.empty) for p in sig.parameters.values()],
            return_annotation=sig.empty,
        )
    )


def test_signatures_are_fluid_1_8_5s():
    assert _plain(fluid.layers.beam_search) == (
        "(pre_ids, pre_scores, ids, scores, beam_size, end_id, level=0, is_accumulated=True, "
        "name=None, return_parent_idx=False)"
    )
    assert _plain(fluid.layers.beam_search_decode) == "(ids, scores, beam_size, end_id, name=None)"


@pytest.mark.parametrize("use_array", [False, True], ids=["list", "tensor-array"])
def test_unrolled_decode_of_a_fixed_table(use_array):
    """Two sources, beam 2; the next-word log-probabilities depend only on the last word, so
    the best sentences are known: 0 -> 2 -> 1(end) beats 0 -> 3 -> 1."""
    table = np.log(
        np.array(
            [
                [0.05, 0.05, 0.6, 0.3],  # after 0
                [0.01, 0.97, 0.01, 0.01],  # after end: end
                [0.05, 0.8, 0.1, 0.05],  # after 2
                [0.05, 0.5, 0.05, 0.4],  # after 3
            ],
            "float32",
        )
    )
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        ids0 = fluid.data("ids0", [None, 1], "int64", lod_level=2)
        sc0 = fluid.data("sc0", [None, 1], "float32", lod_level=2)
        tab = fluid.layers.assign(table)
        pre_ids, pre_scores = ids0, sc0
        all_ids, all_scores = [ids0], [sc0]
        for _ in range(3):
            logp = fluid.layers.gather(tab, fluid.layers.reshape(pre_ids, [-1]))
            top_s, top_i = fluid.layers.topk(logp, k=2)
            acc = fluid.layers.elementwise_add(top_s, pre_scores, axis=0)
            acc = fluid.layers.lod_reset(acc, pre_ids)
            pre_ids, pre_scores = fluid.layers.beam_search(
                pre_ids, pre_scores, top_i, acc, beam_size=2, end_id=1
            )
            all_ids.append(pre_ids)
            all_scores.append(pre_scores)
        if use_array:  # Fluid's form: the steps written to two tensor arrays
            arrays = [fluid.layers.create_array(d) for d in ("int64", "float32")]
            for k, (i, sc) in enumerate(zip(all_ids, all_scores)):
                pos = fluid.layers.fill_constant([1], "int64", k)
                fluid.layers.array_write(i, pos, arrays[0])
                fluid.layers.array_write(sc, pos, arrays[1])
            all_ids, all_scores = arrays
        sent, score = fluid.layers.beam_search_decode(all_ids, all_scores, beam_size=2, end_id=1)
    exe = fluid.Executor(fluid.CPUPlace())
    place = fluid.CPUPlace()
    lens = [[1, 1], [1, 1]]
    feed = {
        "ids0": fluid.create_lod_tensor(np.zeros((2, 1), "int64"), lens, place),
        "sc0": fluid.create_lod_tensor(np.zeros((2, 1), "float32"), lens, place),
    }
    s, sc = exe.run(main, feed=feed, fetch_list=[sent, score], return_numpy=False)
    assert s.lod() == [[0, 2, 4], [0, 3, 6, 9, 12]]
    np.testing.assert_array_equal(np.array(s), [0, 2, 1, 0, 3, 1] * 2)
    want = [0, np.log(0.6), np.log(0.6 * 0.8), 0, np.log(0.3), np.log(0.3 * 0.5)] * 2
    np.testing.assert_allclose(np.array(sc), want, rtol=1e-5)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"beam_size": 0}, r"beam_search: beam_size must be an int >= 1, given 0"),
        ({"end_id": -1}, r"beam_search: end_id must be an int >= 0"),
    ],
)
def test_bad_arguments_name_the_layer(kw, match):
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        pre = fluid.data("p", [None, 1], "int64", lod_level=2)
        ps = fluid.data("ps", [None, 1], "float32", lod_level=2)
        sc = fluid.data("s", [None, 2], "float32", lod_level=2)
        args = {"beam_size": 2, "end_id": 1, **kw}
        with pytest.raises(ValueError, match=match):
            fluid.layers.beam_search(pre, ps, None, sc, **args)


def test_scores_without_lod_is_a_clear_error():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        pre = fluid.data("p", [None, 1], "int64")
        ps = fluid.data("ps", [None, 1], "float32")
        sc = fluid.data("s", [None, 2], "float32")
        out = fluid.layers.beam_search(pre, ps, None, sc, beam_size=2, end_id=1)
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {"p": np.zeros((2, 1), "int64"), "ps": np.zeros((2, 1), "float32")}
    feed["s"] = np.full((2, 2), 0.5, "float32")
    with pytest.raises(
        Exception, match=r"beam_search: input scores \('s'\) must be a LoDTensor with LoD"
    ):
        exe.run(out[0].block.program, feed=feed, fetch_list=[out[0]])
