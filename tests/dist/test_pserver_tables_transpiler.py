"""DistributeTranspiler with a distributed embedding table: the programs it writes."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("oar_dist")

from oar import fluid

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


def test_trainer_prefetches_and_sends_row_blocks():
    t, main, startup = transpile()
    ts = types(main)
    assert ts[0] == "distributed_lookup_table" and "lookup_table" not in ts
    assert "distributed_lookup_table_grad" in ts and "lookup_table_grad" not in ts
    look = main.global_block().ops[0]
    assert look.attr("table_names") == ["emb.block0", "emb.block1"]
    assert look.attr("height_sections") == [4, 3]
    assert look.attr("endpoints") == EPS.split(",")
    split = main.global_block().ops[ts.index("split_selected_rows")]
    assert split.output("Out") == ["emb@GRAD.block0", "emb@GRAD.block1"]
    send = main.global_block().ops[ts.index("send")]
    assert "emb@GRAD.block0" in send.input("X") and "emb@GRAD" not in send.input("X")
    recv = main.global_block().ops[ts.index("recv")]
    assert not any(n.startswith("emb") for n in recv.output("Out"))
    # the trainer's startup creates the dense parameters only
    assert "assign_value" not in types(startup)
    assert not any("emb" in n for op in startup.global_block().ops for n in op.output_arg_names)


def test_each_pserver_holds_and_initialises_its_row_block():
    t, main, startup = transpile(opt=fluid.optimizer.Adam(0.1))
    for i, ep in enumerate(EPS.split(",")):
        prog, start = t.get_pserver_programs(ep)
        lso = prog.global_block().ops[-1]
        assert lso.attr("tables") == [f"emb.block{i}"]
        assert f"emb_moment1_0.block{i}" in lso.attr("var_names")
        scope = fluid.Scope()
        fluid.Executor(fluid.CPUPlace()).run(start, scope=scope)
        block = np.array(scope.find_var(f"emb.block{i}").get_tensor())
        np.testing.assert_array_equal(block, TABLE[:4] if i == 0 else TABLE[4:])
        moment = np.array(scope.find_var(f"emb_moment1_0.block{i}").get_tensor())
        assert moment.shape == block.shape


def test_one_pserver_holds_the_whole_table():
    t, main, startup = transpile(eps="127.0.0.1:6174")
    assert "split_selected_rows" not in types(main)
    assert main.global_block().ops[0].attr("table_names") == ["emb"]
    assert t.get_pserver_program("127.0.0.1:6174").global_block().ops[-1].attr("tables") == ["emb"]


def test_a_table_read_by_other_ops_is_refused():
    with pytest.raises(NotImplementedError, match="'emb' is also read by"):
        transpile(tied=True)
