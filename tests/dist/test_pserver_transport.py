"""The pserver wire format and ZeroMQ transport: round trips, refusals, authentication."""

from __future__ import annotations

import json
import socket
import threading

import numpy as np
import pytest

zmq = pytest.importorskip("zmq")
pytest.importorskip("oar_dist")

from oar import fluid  # noqa: E402
from oar.api import SelectedRows  # noqa: E402
from oar_dist.pserver import PserverError, wire  # noqa: E402
from oar_dist.pserver.server import PserverLoop  # noqa: E402
from oar_dist.pserver.transport import ZmqClient  # noqa: E402

W = np.arange(6, dtype="float32").reshape(2, 3)


def test_wire_round_trip_dense_and_sparse():
    sr = SelectedRows([3, 0], 5, np.ones((2, 4), "float64"))
    msg = wire.Message(wire.SEND, trainer=3, seq=9, tensors=(("a", W), ("b", sr)))
    back = wire.decode([bytes(f) for f in wire.encode(msg)])
    assert back.kind == wire.SEND and back.trainer == 3 and back.seq == 9
    np.testing.assert_array_equal(back.tensors[0][1], W)
    b = back.tensors[1][1]
    assert b.rows() == [3, 0] and b.height() == 5 and b.value.dtype == np.float64


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda f: [b"XXXX" + f[0][4:]] + f[1:], "bad magic"),
        (lambda f: [f[0][:10]] + f[1:], "header ends"),
        (lambda f: [f[0], f[1][:-4]], "declares float32"),
        (lambda f: f + [b"extra"], "frames more than the header declares"),
        (lambda f: [f[0]], "the header needs at least"),
        (lambda f: [], "empty message"),
    ],
)
def test_malformed_frames_are_refused(mutate, match):
    frames = [bytes(f) for f in wire.encode(wire.Message(wire.SEND, tensors=(("a", W),)))]
    with pytest.raises(wire.WireError, match=match):
        wire.decode(mutate(frames))


def test_sparse_rows_outside_the_table_are_refused():
    sr = SelectedRows([7], 5, np.ones((1, 2), "float32"))
    frames = [bytes(f) for f in wire.encode(wire.Message(wire.SEND, tensors=(("t", sr),)))]
    with pytest.raises(wire.WireError, match=r"row ids outside \[0, 5\)"):
        wire.decode(frames)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _program() -> str:
    prog = fluid.Program()
    b = prog.global_block()
    for n, shape in (("w", [2, 3]), ("w@GRAD", [2, 3]), ("lr", [1])):
        b.create_var(name=n, shape=shape, dtype="float32", persistable=n != "w@GRAD")
    b.append_op(
        "sgd", {"Param": ["w"], "Grad": ["w@GRAD"], "LearningRate": ["lr"]}, {"ParamOut": ["w"]}
    )
    return json.dumps([prog.to_dict()])


@pytest.fixture
def secured(monkeypatch):
    monkeypatch.setenv("OAR_PSERVER_SECRET", "right")
    ep = f"127.0.0.1:{_port()}"
    attrs = {
        "endpoint": ep,
        "Fanin": 1,
        "sync_mode": False,
        "distributed_mode": 1,
        "var_names": ["w", "lr"],
        "grad_to_block_id": ["w@GRAD:0"],
        "optimize_programs": _program(),
        "lr_program": "",
        "tables": [],
    }
    loop = PserverLoop([W.copy(), np.full(1, 0.5, "float32")], attrs)
    errors = []

    def run():
        try:
            loop.run()
        except Exception as exc:
            errors.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    yield ep, loop
    loop.stop()
    t.join(5)
    loop.close()
    assert not errors, errors


def _get(client) -> np.ndarray:
    reply = client.request(wire.Message(wire.GET, tensors=(("w", np.empty(0, np.uint8)),)))
    return dict(reply.tensors)["w"]


def test_authenticated_client_pushes_and_pulls(secured):
    ep, loop = secured
    c = ZmqClient(ep, 0, wait=10)
    try:
        np.testing.assert_array_equal(_get(c), W)
        c.request(wire.Message(wire.SEND, tensors=(("w@GRAD", np.ones((2, 3), "float32")),)))
        np.testing.assert_allclose(_get(c), W - 0.5)  # async: applied on arrival
        with pytest.raises(PserverError, match="'nope', which it does not hold"):
            c.request(wire.Message(wire.GET, tensors=(("nope", np.empty(0, np.uint8)),)))
        c.request(wire.Message(wire.COMPLETE))  # the job of one trainer ends
    finally:
        c.close()


def test_posts_never_leave_more_than_a_bounded_number_of_replies_uncollected(secured):
    from oar_dist.pserver.transport import MAX_IN_FLIGHT

    ep, loop = secured
    c = ZmqClient(ep, 0, wait=10)
    try:
        most = 0
        for _ in range(3 * MAX_IN_FLIGHT):  # async pushes that nobody waits for
            c.post(wire.Message(wire.SEND, tensors=(("w@GRAD", np.ones((2, 3), "float32")),)))
            most = max(most, c.outstanding)
        assert most <= MAX_IN_FLIGHT
        np.testing.assert_allclose(_get(c), W - 0.5 * 3 * MAX_IN_FLIGHT, rtol=1e-5)
        c.request(wire.Message(wire.COMPLETE))
    finally:
        c.close()


def test_wrong_secret_and_raw_peers_are_refused_and_the_pserver_goes_on(secured, monkeypatch):
    ep, loop = secured
    monkeypatch.setenv("OAR_PSERVER_SECRET", "wrong")
    with pytest.raises(PserverError, match="failed authentication"):
        ZmqClient(ep, 0, wait=10)
    ctx = zmq.Context.instance()
    raw = ctx.socket(zmq.DEALER)
    raw.setsockopt(zmq.LINGER, 0)
    raw.connect(f"tcp://{ep}")
    try:
        # a well-formed SEND without a handshake: refused, nothing applied
        raw.send_multipart(
            wire.encode(wire.Message(wire.SEND, tensors=(("w@GRAD", np.ones((2, 3), "f4")),)))
        )
        assert raw.poll(10000)
        reply = wire.decode(raw.recv_multipart())
        assert reply.kind == wire.ERROR and "not authenticated" in reply.text
        for junk in ([b"garbage"], [b"OARP" + b"\xff" * 40, b"x"], [b""]):
            raw.send_multipart(junk)
            assert raw.poll(10000)
            reply = wire.decode(raw.recv_multipart())
            assert reply.kind == wire.ERROR and "malformed" in reply.text
    finally:
        raw.close()
    assert loop.server.refused >= 4
    monkeypatch.setenv("OAR_PSERVER_SECRET", "right")
    c = ZmqClient(ep, 0, wait=10)
    try:
        np.testing.assert_array_equal(_get(c), W)  # still serving, unchanged
        c.request(wire.Message(wire.COMPLETE))
    finally:
        c.close()


def test_unreachable_pserver_is_named():
    ep = f"127.0.0.1:{_port()}"
    with pytest.raises(PserverError, match=f"no pserver answered at {ep} within 0.3 s"):
        ZmqClient(ep, 0, wait=0.3)
