"""DistributeTranspiler in pserver mode: the programs it writes (no processes started)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("oar_dist")

from oar import fluid
from oar.api import program_from_dict

EPS = "127.0.0.1:6174,127.0.0.1:6175"


def model(hidden=3, opt=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", [13])
        loss = fluid.layers.mean(fluid.layers.fc(fluid.layers.fc(x, hidden, act="relu"), 1))
        (opt or fluid.optimizer.SGD(0.1)).minimize(loss)
    return main, startup


def transpile(hidden=3, opt=None, config=None, **kw):
    main, startup = model(hidden, opt)
    t = fluid.DistributeTranspiler(config=config)
    t.transpile(0, program=main, pservers=EPS, trainers=2, startup_program=startup, **kw)
    return t, main, startup


def types(prog):
    return [op.type for op in prog.global_block().ops]


def test_trainer_program_sends_gradients_and_receives_parameters():
    t, main, startup = transpile()
    tp = t.get_trainer_program(wait_port=False)
    assert tp is main
    ts = types(tp)
    assert "sgd" not in ts
    assert ts[-4:] == ["send", "send_barrier", "recv", "fetch_barrier"]
    send = tp.global_block().ops[ts.index("send")]
    assert sorted(send.input("X")) == sorted(p.name + "@GRAD" for p in main.all_parameters())
    # round robin over both pservers
    assert set(send.attr("epmap")) == set(EPS.split(","))
    assert types(startup)[-2:] == ["recv", "fetch_barrier"]


def test_pserver_program_holds_its_share_and_its_update_ops():
    t, main, _ = transpile()
    held = []
    for ep in EPS.split(","):
        prog, startup = t.get_pserver_programs(ep)
        (op,) = prog.global_block().ops
        assert op.type == "listen_and_serv" and op.attr("Fanin") == 2
        progs = json.loads(op.attr("optimize_programs"))
        assert len(progs) == len(op.attr("grad_to_block_id"))
        held += [n for n in op.input("X") if n != "learning_rate_0"]
        assert sorted(n for o in startup.global_block().ops for n in o.output_arg_names) == sorted(
            op.input("X")
        )
    assert sorted(held) == sorted(p.name for p in main.all_parameters())
    with pytest.raises(ValueError, match="not one of the pservers"):
        t.get_pserver_program("127.0.0.1:1")
    ep = EPS.split(",")[0]
    a = t.get_startup_program(ep)
    b = t.get_startup_program(ep, t.get_pserver_program(ep).clone())
    assert types(a) == types(b) and len(types(a)) > 0


def test_big_parameter_is_sliced_over_both_pservers_unless_disabled():
    t, main, startup = transpile(hidden=1300)  # fc_0.w_0 is 13 x 1300 > 2 x 8192 elements
    ts = types(main)
    assert "split_byref" in ts and ts[-1] == "concat"
    split = main.global_block().ops[ts.index("split_byref")]
    assert split.attr("sections") == [7, 6]
    shapes = {}
    for ep in EPS.split(","):
        _, sp = t.get_pserver_programs(ep)
        for v in sp.global_block().vars.values():
            shapes[v.name] = tuple(v.shape)
    assert shapes["fc_0.w_0.block0"] == (7, 1300) and shapes["fc_0.w_0.block1"] == (6, 1300)
    _, main2, _ = transpile(hidden=1300, slice_var_up=False)
    assert "split_byref" not in types(main2)


def test_hash_name_and_config_checks():
    cfg = fluid.DistributeTranspilerConfig()
    cfg.split_method = fluid.transpiler.HashName
    t, main, _ = transpile(config=cfg)
    send = main.global_block().ops[types(main).index("send")]
    t2, main2, _ = transpile(config=cfg)
    send2 = main2.global_block().ops[types(main2).index("send")]
    assert send.attr("epmap") == send2.attr("epmap")  # the same in every process
    with pytest.raises(ValueError, match="pservers must"):
        model_main, model_startup = model()
        fluid.DistributeTranspiler().transpile(0, program=model_main, pservers="", trainers=2)
    with pytest.raises(ValueError, match=r"trainer_id must be in \[0, 2\) for 2 trainers, given 3"):
        m, s = model()
        fluid.DistributeTranspiler().transpile(
            3, program=m, pservers=EPS, trainers=2, startup_program=s
        )


def test_async_mode_has_no_barriers_and_adam_state_moves_to_pservers():
    t, main, _ = transpile(opt=fluid.optimizer.Adam(0.01), sync_mode=False)
    ts = types(main)
    assert "send_barrier" not in ts and "fetch_barrier" not in ts and "adam" not in ts
    names = []
    for ep in EPS.split(","):
        (op,) = t.get_pserver_program(ep).global_block().ops
        assert op.attr("distributed_mode") == 1
        names += op.input("X")
    assert any("moment1" in n for n in names)


def test_global_norm_clipping_stays_on_the_trainer():
    clip = fluid.clip.GradientClipByGlobalNorm(1.0)
    t, main, startup = transpile(opt=fluid.optimizer.SGD(0.1, grad_clip=clip))
    ts = types(main)
    assert "squared_l2_norm" in ts and "sqrt" in ts and "sgd" not in ts
    send = main.global_block().ops[ts.index("send")]
    assert all(n.endswith("@GRAD_clip_0") for n in send.input("X"))
    assert all(n.endswith("@GRAD") for n in send.attr("send_varnames"))
    for ep in EPS.split(","):
        prog = t.get_pserver_program(ep)
        lso = prog.global_block().ops[-1]
        for d in json.loads(lso.attr("optimize_programs")):
            assert types(program_from_dict(d)) == ["sgd"]
        assert all(g.split(":")[0].endswith("@GRAD") for g in lso.attr("grad_to_block_id"))
