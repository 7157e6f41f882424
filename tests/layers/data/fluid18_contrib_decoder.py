"""Golden data for fluid.contrib.decoder (InitState, StateCell, TrainingDecoder,
BeamSearchDecoder) on a tiny model: run under Fluid 1.8.5
(``python fluid18_contrib_decoder.py``) to regenerate fluid18_contrib_decoder.npz.

Every parameter, in creation order, is set to values drawn from RandomState(7) after the
startup program; oar's test builds the same model and sets its parameters the same way.
"""

import os

import numpy as np
import paddle.fluid as fluid
from paddle.fluid.contrib.decoder import BeamSearchDecoder, InitState, StateCell, TrainingDecoder

VOCAB, WORD, HID = 6, 4, 5
OUT = {}
place = fluid.CPUPlace()
rng = np.random.RandomState(3)
CTX = rng.uniform(-1, 1, (2, HID)).astype("float32")
TRG = np.array([[0], [2], [3], [4], [0], [5]], "int64")
TRG_LENS = [4, 2]


def cell(context):
    h0 = InitState(init=context, need_reorder=True)
    sc = StateCell(inputs={"x": None}, states={"h": h0}, out_state="h")

    @sc.state_updater
    def updater(state_cell):
        x = state_cell.get_input("x")
        h = state_cell.get_state("h")
        state_cell.set_state("h", fluid.layers.fc([h, x], HID, act="tanh"))

    return sc


def set_params(program, scope):
    prng = np.random.RandomState(7)
    for i, p in enumerate(program.global_block().all_parameters()):
        v = prng.uniform(-0.8, 0.8, p.shape).astype("float32")
        scope.find_var(p.name).get_tensor().set(v, place)
        OUT[f"{program._tag}_p{i}"] = v


def training():
    main, start = fluid.Program(), fluid.Program()
    main._tag = "train"
    with fluid.program_guard(main, start):
        ctx = fluid.data("ctx", [None, HID])
        trg = fluid.data("trg", [None, 1], "int64", lod_level=1)
        emb = fluid.embedding(trg, [VOCAB, WORD])
        decoder = TrainingDecoder(cell(ctx))
        with decoder.block():
            word = decoder.step_input(emb)
            decoder.state_cell.compute_state(inputs={"x": word})
            score = fluid.layers.fc(decoder.state_cell.get_state("h"), VOCAB, act="softmax")
            decoder.state_cell.update_states()
            decoder.output(score)
        out = decoder()
    exe = fluid.Executor(place)
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(start)
        set_params(main, scope)
        trg_t = fluid.create_lod_tensor(TRG, [TRG_LENS], place)
        (res,) = exe.run(
            main, feed={"ctx": CTX, "trg": trg_t}, fetch_list=[out], return_numpy=False
        )
    OUT["train_out"] = np.array(res)
    OUT["train_lod"] = np.array(res.lod()[0])


def decoding():
    main, start = fluid.Program(), fluid.Program()
    main._tag = "decode"
    with fluid.program_guard(main, start):
        ctx = fluid.data("ctx", [None, HID])
        init_ids = fluid.data("init_ids", [None, 1], "int64", lod_level=2)
        init_scores = fluid.data("init_scores", [None, 1], "float32", lod_level=2)
        decoder = BeamSearchDecoder(
            cell(ctx),
            init_ids,
            init_scores,
            target_dict_dim=VOCAB,
            word_dim=WORD,
            topk_size=3,
            sparse_emb=False,
            max_len=4,
            beam_size=2,
            end_id=1,
        )
        decoder.decode()
        ids, scores = decoder()
    exe = fluid.Executor(place)
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(start)
        set_params(main, scope)
        lens = [[1, 1], [1, 1]]
        feed = {
            "ctx": CTX,
            "init_ids": fluid.create_lod_tensor(np.zeros((2, 1), "int64"), lens, place),
            "init_scores": fluid.create_lod_tensor(np.ones((2, 1), "float32"), lens, place),
        }
        i, s = exe.run(main, feed=feed, fetch_list=[ids, scores], return_numpy=False)
    OUT["decode_ids"], OUT["decode_scores"] = np.array(i), np.array(s)
    OUT["decode_lod0"], OUT["decode_lod1"] = np.array(i.lod()[0]), np.array(i.lod()[1])
    OUT["decode_params"] = np.array([str(p.shape) for p in main.global_block().all_parameters()])


training()
decoding()
np.savez(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_contrib_decoder.npz"), **OUT
)
print({k: (v.shape, v if v.size < 30 else "") for k, v in OUT.items()})
