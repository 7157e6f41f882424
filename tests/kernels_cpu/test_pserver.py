"""Parameter-server ops of oar-dist against a pserver loop running in a thread of this process.

The pserver (async mode, one trainer, an SGD update with learning rate 0, so
the parameter keeps its value) serves ``w``; ``send`` posts a gradient,
``recv`` reads ``w`` back, ``distributed_lookup_table`` prefetches rows of it, the barriers
are acknowledged; ``listen_and_serv``
runs a whole (empty) job: a helper thread plays a trainer that connects and
closes at once. Multi-process jobs are tested in ``tests/dist/test_pserver*``.
"""

from __future__ import annotations

import json
import socket
import threading

import numpy as np
import pytest
from oar.testing import OpCase, check_case

try:
    import oar_dist  # noqa: F401
    import zmq  # noqa: F401
except ImportError:
    HAVE_DIST = False
else:
    HAVE_DIST = True


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


W = np.arange(6, dtype="float32").reshape(2, 3)
X = np.random.RandomState(3).rand(3, 4)
EP = f"127.0.0.1:{_port()}" if HAVE_DIST else ""
EP2 = f"127.0.0.1:{_port()}" if HAVE_DIST else ""


def _sgd_program() -> str:
    from oar import fluid

    prog = fluid.Program()
    b = prog.global_block()
    for n, shape in (("w", [2, 3]), ("w@GRAD", [2, 3]), ("lr", [1])):
        b.create_var(name=n, shape=shape, dtype="float32", persistable=n != "w@GRAD")
    b.append_op(
        "sgd",
        {"Param": ["w"], "Grad": ["w@GRAD"], "LearningRate": ["lr"]},
        {"ParamOut": ["w"]},
        {},
    )
    return json.dumps([prog.to_dict()])


def _serve_attrs(ep: str) -> dict:
    return {
        "endpoint": ep,
        "Fanin": 1,
        "sync_mode": False,
        "distributed_mode": 1,
        "var_names": ["w", "lr"],
        "grad_to_block_id": ["w@GRAD:0"],
        "optimize_programs": _sgd_program(),
    }


IDS = np.array([[1], [0], [1], [1]], dtype="int64")


def _table_attrs(**kw) -> dict:
    """``w`` as a distributed table of one hashed shard on the pserver at EP."""
    attrs = {"table_names": ["w"], "endpoints": [EP], "height": 2, "emb_dim": 3}
    return dict(attrs, **kw)


def _table_specs() -> str:
    """``w`` is also a hashed table shard of capacity 2 whose rows start as W's (ids 0 and 1
    get slots 0 and 1 when first asked for together)."""
    init = {"type": "assign_value", "attrs": {"shape": [2, 3], "fp32_values": W.ravel().tolist()}}
    spec = {"name": "w", "grad": "w@TABLE_GRAD", "ids": "w@IDS", "capacity": 2, "shard": 0}
    return json.dumps([dict(spec, shards=1, table="w", init=dict(init, table="w"))])


CASES = (
    [
        OpCase(
            "send",
            {"X": [np.ones((2, 3), "float32")]},
            {"epmap": [EP], "send_varnames": ["w@GRAD"], "sync_mode": False},
            outputs={},
        ),
        OpCase("send_barrier", {}, {"endpoints": [EP]}, outputs={}),
        OpCase(
            "recv",
            {},
            {"epmap": [EP], "varnames": ["w"]},
            lambda **a: {"Out": [W]},
            outputs={"Out": 1},
        ),
        OpCase("fetch_barrier", {}, {"endpoints": [EP]}, outputs={}),
        OpCase(
            "split_byref",
            {"X": X},
            {"sections": [1, 2]},
            lambda X, **a: {"Out": [X[:1], X[1:]]},
            outputs={"Out": 2},
        ),
        OpCase(
            "distributed_lookup_table",
            {"Ids": IDS},
            _table_attrs(padding_idx=-1),
            lambda Ids, **a: {"Out": W[Ids.reshape(-1)]},
        ),
        OpCase(
            "distributed_lookup_table",
            {"Ids": IDS},
            _table_attrs(padding_idx=0),
            lambda Ids, **a: {"Out": W[Ids.reshape(-1)] * (Ids != 0)},
            name="padding",
        ),
        OpCase(
            "geo_sgd_communicate",
            {"X": [W]},
            {"epmap": [EP], "varnames": ["w"], "init": True},
            lambda X, **a: {"Out": list(X)},
            outputs={"Out": 1},
            name="init",
        ),
        OpCase(
            "listen_and_serv",
            {"X": [W, np.zeros(1, "float32")]},
            _serve_attrs(EP2),
            lambda X, **a: {"Out": list(X)},
            outputs={"Out": 2},
        ),
    ]
    if HAVE_DIST
    else []
)


def _start_servers() -> None:
    """The async pserver at EP, and a trainer at EP2 that joins and closes every job there.

    Started when this module is imported (other test modules import its CASES and run them
    too) and stopped at exit."""
    import atexit

    from oar_dist.pserver import wire
    from oar_dist.pserver.client import close_all
    from oar_dist.pserver.server import PserverLoop
    from oar_dist.pserver.transport import ZmqClient

    attrs = dict(_serve_attrs(EP), tables=["w"], lr_program="", transport="zmq")
    attrs.update(var_names=["w", "lr", "w@IDS"], table_specs=_table_specs())
    loop = PserverLoop([W.copy(), np.zeros(1, "float32"), np.zeros(3, "int64")], attrs)

    def serve():
        try:
            loop.run()
        except Exception as exc:  # at exit, another module's shutdown may drop our clients
            loop.error = exc

    t = threading.Thread(target=serve, daemon=True)
    stop = threading.Event()
    t.start()

    def closer():
        while not stop.is_set():
            try:
                c = ZmqClient(EP2, 0, wait=0.5)
            except Exception:
                stop.wait(0.05)
                continue
            try:
                c.request(wire.Message(wire.COMPLETE))
            except Exception:
                pass
            finally:
                c.close()

    helper = threading.Thread(target=closer, daemon=True)
    helper.start()

    def shutdown():
        stop.set()
        loop.stop()
        t.join(5)
        helper.join(5)
        close_all(notify=False)
        if not t.is_alive():
            loop.close()

    atexit.register(shutdown)


if HAVE_DIST:
    _start_servers()


@pytest.mark.skipif(not HAVE_DIST, reason="oar-dist (with pyzmq) is not installed")
@pytest.mark.parametrize("case", CASES, ids=str)
def test_case(case):
    check_case(case)
