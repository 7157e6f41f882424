"""DistributeTranspiler with a distributed embedding table: the programs it writes."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("oar_dist")

from oar import fluid
from oar_dist.pserver.hashed import capacity

EPS = "127.0.0.1:6174,127.0.0.1:6175"
TABLE = np.arange(7 * 3, dtype="float32").reshape(7, 3)


def transpile(eps=EPS, tied=False, opt=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        ids = fluid.layers.data("ids", [1], dtype="int64")
        emb = fluid.layers.embedding(
            ids,
            size=[7, 3],
            is_sparse=True,
            is_distributed=True,
            param_attr=fluid.ParamAttr(
                name="emb", initializer=fluid.initializer.NumpyArrayInitializer(TABLE)
            ),
        )
        out = fluid.layers.fc(emb, 1)
        if tied:
            w = main.global_block().var("emb")
            out = out + fluid.layers.reduce_sum(fluid.layers.matmul(emb, w, transpose_y=True))
        (opt or fluid.optimizer.SGD(0.1)).minimize(fluid.layers.mean(out))
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, pservers=eps, trainers=2, startup_program=startup)
    return t, main, startup


def types(prog):
    return [op.type for op in prog.global_block().ops]


def test_trainer_prefetches_and_sends_shards():
    t, main, startup = transpile()
    ts = types(main)
    assert ts[0] == "distributed_lookup_table" and "lookup_table" not in ts
    assert "distributed_lookup_table_grad" in ts and "lookup_table_grad" not in ts
    look = main.global_block().ops[0]
    assert look.attr("table_names") == ["emb.block0", "emb.block1"]
    assert look.attr("height") == 7
    assert look.attr("endpoints") == EPS.split(",")
    split = main.global_block().ops[ts.index("shard_selected_rows")]
    assert split.output("Out") == ["emb@GRAD.block0", "emb@GRAD.block1"]
    assert split.attr("shards") == 2
    send = main.global_block().ops[ts.index("send")]
    assert "emb@GRAD.block0" in send.input("X") and "emb@GRAD" not in send.input("X")
    recv = main.global_block().ops[ts.index("recv")]
    assert not any(n.startswith("emb") for n in recv.output("Out"))
    # the trainer's startup creates the dense parameters only
    assert "assign_value" not in types(startup)
    assert not any("emb" in n for op in startup.global_block().ops for n in op.output_arg_names)


def test_each_pserver_holds_an_empty_hashed_shard():
    t, main, startup = transpile(opt=fluid.optimizer.Adam(0.1))
    cap = capacity(7, 2)
    for i, ep in enumerate(EPS.split(",")):
        prog, start = t.get_pserver_programs(ep)
        lso = prog.global_block().ops[-1]
        assert lso.attr("tables") == [f"emb.block{i}"]
        assert f"emb_moment1_0.block{i}" in lso.attr("var_names")
        assert f"emb.block{i}@IDS" in lso.attr("var_names")
        (spec,) = json.loads(lso.attr("table_specs"))
        assert (spec["shard"], spec["shards"], spec["capacity"]) == (i, 2, cap)
        assert spec["init"]["type"] == "assign_value"  # rows drawn from it per id
        made = {op.output("Out")[0]: op.type for op in start.global_block().ops}
        for n in (f"emb.block{i}", f"emb.block{i}@IDS", f"emb_moment1_0.block{i}"):
            assert made[n] == "table_shard_zeros", made  # memory committed as rows are used
        scope = fluid.Scope()
        fluid.Executor(fluid.CPUPlace()).run(start, scope=scope)
        block = np.array(scope.find_var(f"emb.block{i}").get_tensor())
        assert block.shape == (cap, 3) and not block.any()  # no table drawn up front
        ids = np.array(scope.find_var(f"emb.block{i}@IDS").get_tensor())
        assert ids.shape == (cap + 1,) and not ids.any()  # no id yet
        moment = np.array(scope.find_var(f"emb_moment1_0.block{i}").get_tensor())
        assert moment.shape == block.shape


def test_one_pserver_holds_the_whole_table():
    t, main, startup = transpile(eps="127.0.0.1:6174")
    assert types(main).count("shard_selected_rows") == 1
    assert main.global_block().ops[0].attr("table_names") == ["emb.block0"]
    lso = t.get_pserver_program("127.0.0.1:6174").global_block().ops[-1]
    assert lso.attr("tables") == ["emb.block0"]
    assert json.loads(lso.attr("table_specs"))[0]["capacity"] == 7


def test_global_norm_clipping_keeps_the_table_gradient_sparse():
    clip = fluid.clip.GradientClipByGlobalNorm(1.0)
    t, main, startup = transpile(opt=fluid.optimizer.SGD(0.1, grad_clip=clip))
    ts = types(main)
    scale = main.global_block().ops[ts.index("scale_selected_rows")]
    assert scale.input("X") == ["emb@GRAD"]
    (clipped,) = scale.output("Out")
    assert main.global_block().var(clipped).type == "selected_rows"
    split = main.global_block().ops[ts.index("shard_selected_rows")]
    assert split.input("X") == [clipped]
    norms = [op for op in main.global_block().ops if op.type == "squared_l2_norm"]
    assert "emb@GRAD" in [op.input("X")[0] for op in norms]


def test_a_table_read_by_other_ops_is_refused():
    with pytest.raises(NotImplementedError, match="'emb' is also read by"):
        transpile(tied=True)
