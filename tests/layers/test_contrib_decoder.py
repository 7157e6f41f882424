"""fluid.contrib.decoder (the pre-1.6 API): a TrainingDecoder and a BeamSearchDecoder on a
tiny model give Fluid 1.8.5's outputs (data/fluid18_contrib_decoder.py, same parameters)."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import ArgumentError
from oar.fluid.contrib.decoder import BeamSearchDecoder, InitState, StateCell, TrainingDecoder

G = np.load(Path(__file__).parent / "data" / "fluid18_contrib_decoder.npz")
VOCAB, WORD, HID = 6, 4, 5
PLACE = fluid.CPUPlace()
CTX = np.random.RandomState(3).uniform(-1, 1, (2, HID)).astype("float32")


def _cell(context):
    sc = StateCell(inputs={"x": None}, states={"h": InitState(init=context, need_reorder=True)},
                   out_state="h")  # fmt: skip

    @sc.state_updater
    def updater(state_cell):
        x = state_cell.get_input("x")
        h = state_cell.get_state("h")
        state_cell.set_state("h", fluid.layers.fc([h, x], HID, act="tanh"))

    return sc


def _run(main, start, tag, feed, fetch):
    params = main.global_block().all_parameters()
    assert [p.shape for p in params] == [G[f"{tag}_p{i}"].shape for i in range(len(params))]
    exe = fluid.Executor(PLACE)
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(start)
        for i, p in enumerate(params):
            scope.find_var(p.name).get_tensor().set(G[f"{tag}_p{i}"], PLACE)
        return exe.run(main, feed=feed, fetch_list=fetch, return_numpy=False)


def test_training_decoder_matches_fluid18():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        ctx = fluid.data("ctx", [None, HID])
        trg = fluid.data("trg", [None, 1], "int64", lod_level=1)
        emb = fluid.embedding(trg, [VOCAB, WORD])
        decoder = TrainingDecoder(_cell(ctx))
        with decoder.block():
            word = decoder.step_input(emb)
            decoder.state_cell.compute_state(inputs={"x": word})
            score = fluid.layers.fc(decoder.state_cell.get_state("h"), VOCAB, act="softmax")
            decoder.state_cell.update_states()
            decoder.output(score)
        out = decoder()
    trg_t = fluid.create_lod_tensor(
        np.array([[0], [2], [3], [4], [0], [5]], "int64"), [[4, 2]], PLACE
    )
    (res,) = _run(main, start, "train", {"ctx": CTX, "trg": trg_t}, [out])
    assert res.lod() == [G["train_lod"].tolist()]
    np.testing.assert_allclose(np.array(res), G["train_out"], rtol=1e-5, atol=1e-6)


def test_beam_search_decoder_matches_fluid18():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        ctx = fluid.data("ctx", [None, HID])
        init_ids = fluid.data("init_ids", [None, 1], "int64", lod_level=2)
        init_scores = fluid.data("init_scores", [None, 1], "float32", lod_level=2)
        decoder = BeamSearchDecoder(
            _cell(ctx), init_ids, init_scores, target_dict_dim=VOCAB, word_dim=WORD,
            topk_size=3, sparse_emb=False, max_len=4, beam_size=2, end_id=1,
        )  # fmt: skip
        decoder.decode()
        ids, scores = decoder()
    lens = [[1, 1], [1, 1]]
    feed = {
        "ctx": CTX,
        "init_ids": fluid.create_lod_tensor(np.zeros((2, 1), "int64"), lens, PLACE),
        "init_scores": fluid.create_lod_tensor(np.ones((2, 1), "float32"), lens, PLACE),
    }
    i, s = _run(main, start, "decode", feed, [ids, scores])
    assert i.lod() == [G["decode_lod0"].tolist(), G["decode_lod1"].tolist()]
    np.testing.assert_array_equal(np.array(i).ravel(), G["decode_ids"])
    np.testing.assert_allclose(np.array(s).ravel(), G["decode_scores"], rtol=1e-5, atol=1e-6)


def test_decoder_misuse_is_refused():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        ctx = fluid.data("ctx", [None, HID])
        with pytest.raises(ArgumentError, match="init_boot"):
            InitState()
        boot = InitState(shape=[-1, 3], value=0.5, init_boot=ctx)
        assert boot.value.shape[1:] == (3,) and not boot.need_reorder
        with pytest.raises(ArgumentError, match="out_state"):
            StateCell({"x": None}, {"h": boot}, "c")
        cell = _cell(ctx)
        with pytest.raises(ArgumentError, match="inside a decoder"):
            cell.get_state("h")
        decoder = TrainingDecoder(cell)
        with pytest.raises(ArgumentError, match="inside block"):
            decoder.step_input(ctx)
        with pytest.raises(ArgumentError, match="after its block"):
            decoder()
