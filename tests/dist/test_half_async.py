"""Half-async trainers without a network: how many steps they merge, and the merged gradients.
(A job against pservers: ``test_pserver_embedding.py``.)"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("zmq")
pytest.importorskip("oar_dist")

from oar.api import SelectedRows
from oar_dist.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy import (
    StrategyFactory,
)
from oar_dist.pserver import half_async, wire


@pytest.fixture(autouse=True)
def _no_flags():
    half_async.configure({})
    yield
    half_async.configure({})


def test_merge_steps_from_the_strategy_else_cpu_num(monkeypatch):
    monkeypatch.delenv("CPU_NUM", raising=False)
    assert half_async.merge_steps() == 1
    monkeypatch.setenv("CPU_NUM", "4")
    assert half_async.merge_steps() == 4
    s = StrategyFactory.create_half_async_strategy()
    s.set_trainer_runtime_config({"communicator_max_merge_var_num": 3})
    half_async.configure(s.get_trainer_runtime_config().get_communicator_flags())
    assert half_async.merge_steps() == 3
    half_async.configure({"communicator_max_merge_var_num": "many"})
    with pytest.raises(ValueError, match="positive integer, given 'many'"):
        half_async.merge_steps()


def test_a_merge_averages_dense_and_concatenates_sparse(monkeypatch):
    posted = []

    class Client:
        def __init__(self, ep):
            self.ep = ep

        def post(self, msg):
            posted.append((self.ep, msg))

    monkeypatch.setattr("oar_dist.pserver.client.get_client", lambda ep, tid: Client(ep))
    m = half_async.Merger(0, 2)
    rows = SelectedRows([5, -3], wire.KEYED, np.ones((2, 2), "float32"))
    m.add(["w@GRAD", "emb@GRAD.block0"], [np.full(3, 2.0, "float32"), rows], ["a:1", "b:2"])
    m.barrier(["a:1", "b:2"])
    assert not posted and m.steps == 1  # queued: the first of 2 steps
    rows2 = SelectedRows([7], wire.KEYED, np.full((1, 2), 4.0, "float32"))
    m.add(["w@GRAD", "emb@GRAD.block0"], [np.full(3, 4.0, "float32"), rows2], ["a:1", "b:2"])
    m.barrier(["a:1", "b:2"])
    kinds = [(ep, msg.kind) for ep, msg in posted]
    assert kinds == [
        ("a:1", wire.SEND),
        ("b:2", wire.SEND),
        ("a:1", wire.BARRIER),
        ("b:2", wire.BARRIER),
    ]
    ((_, dense),) = posted[0][1].tensors
    np.testing.assert_array_equal(dense, np.full(3, 3.0, "float32"))
    ((_, sparse),) = posted[1][1].tensors
    assert sparse.rows() == [5, -3, 7] and sparse.height() == wire.KEYED
    np.testing.assert_array_equal(sparse.value, [[0.5, 0.5], [0.5, 0.5], [2.0, 2.0]])
    assert m.fresh and m.steps == 0 and not m.sums
