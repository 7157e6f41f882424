"""The ZeroMQ transport (``zmq`` in the ``pserver_transports`` registry).

The pserver binds a ROUTER socket; each trainer process holds one DEALER per
pserver. Frames go out with ``copy=False`` (zero-copy for tensor payloads).

**Authentication.** Every connection starts with a challenge-response on the
shared secret from ``OAR_PSERVER_SECRET``: the client sends ``HELLO`` with a
random nonce, the server answers ``CHALLENGE`` with its own nonce and an HMAC
proving it knows the secret, the client answers ``PROOF`` (an HMAC over both
nonces and its trainer id). Until then the server answers every message of
that connection with an error and acts on none of them; the connection's
ZeroMQ routing id (assigned by the ROUTER, per connection) is what stays
authenticated, together with the connection's file descriptor
(``SRCFD``); a socket monitor reports disconnections by descriptor, and the
peer is forgotten then, so a later connection cannot inherit it. Without ``OAR_PSERVER_SECRET`` the key is empty,
which a pserver accepts only on a loopback address.

**Bounds.** ``MAXMSGSIZE`` (``OAR_PSERVER_MAX_MESSAGE_MB``, default 2048)
caps each frame before ZeroMQ reads it, the high-water marks cap what queues
per connection, and the wire format checks every length (``wire.decode``).

**Timeouts.** A client waiting for a reply gives up after
``OAR_PSERVER_TIMEOUT`` seconds (default 120) with an error naming the
endpoint; a connection that drops while a reply is awaited fails at once
(socket monitor), so a killed pserver is reported within milliseconds. That
holds for every pserver the process talks to, not only the one it waits on:
a trainer held at one pserver's barrier names another pserver that died.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import socket
import sys
import threading
import time
import weakref
from typing import Any

import zmq

from oar_dist.pserver import wire
from oar_dist.pserver.errors import PserverError

ENV_SECRET = "OAR_PSERVER_SECRET"
ENV_TIMEOUT = "OAR_PSERVER_TIMEOUT"
ENV_CONNECT_TIMEOUT = "OAR_PSERVER_CONNECT_TIMEOUT"
ENV_MAX_MESSAGE = "OAR_PSERVER_MAX_MESSAGE_MB"
NONCE = 16
HWM = 64  # messages queued per connection and direction
MAX_IN_FLIGHT = HWM // 2  # replies a client leaves uncollected at most


def _env_seconds(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, given {raw!r}") from None
    if value <= 0:
        raise ValueError(f"{name} must be > 0 seconds, given {raw!r}")
    return value


def reply_timeout() -> float:
    return _env_seconds(ENV_TIMEOUT, 120.0)


def connect_timeout() -> float:
    return _env_seconds(ENV_CONNECT_TIMEOUT, 120.0)


def max_message() -> int:
    return int(_env_seconds(ENV_MAX_MESSAGE, 2048.0) * (1 << 20))


def secret() -> bytes:
    return os.environ.get(ENV_SECRET, "").encode()


def _mac(key: bytes, *parts: bytes) -> bytes:
    return hmac.new(key, b"oar-pserver-v1|" + b"|".join(parts), hashlib.sha256).digest()


def _nonce_msg(kind: int, trainer: int, **named: bytes) -> wire.Message:
    import numpy as np

    tensors = tuple((k, np.frombuffer(v, dtype=np.uint8)) for k, v in named.items())
    return wire.Message(kind, trainer=trainer, tensors=tensors)


def _bytes(msg: wire.Message, name: str) -> bytes:
    for n, v in msg.tensors:
        if n == name:
            return bytes(v.tobytes())
    return b""


def split_endpoint(endpoint: str) -> tuple:
    host, sep, port = str(endpoint).rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"pserver endpoint must be 'ip:port', given {endpoint!r}")
    return host, int(port)


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False


class Peer:
    __slots__ = ("ident", "fd", "trainer", "nonce", "authed", "refused")

    def __init__(self, ident: bytes, fd: int) -> None:
        self.ident = ident
        self.fd = fd
        self.trainer = -1
        self.nonce = b""
        self.authed = False
        self.refused = 0


class ZmqServer:
    """The pserver's end: ``poll(timeout)`` gives ``(kind, peer, message)`` events."""

    def __init__(self, endpoint: str) -> None:
        host, port = split_endpoint(endpoint)
        self.endpoint = endpoint
        self.key = secret()
        if not self.key and not _is_loopback(host):
            raise PserverError(
                f"pserver {endpoint}: set {ENV_SECRET} (the same value on every pserver and "
                f"trainer) to serve on a non-loopback address; without a secret any process that "
                f"can reach the port could push gradients or read parameters"
            )
        self.ctx = zmq.Context.instance()
        sock = self.ctx.socket(zmq.ROUTER)
        sock.setsockopt(zmq.MAXMSGSIZE, max_message())
        sock.setsockopt(zmq.RCVHWM, HWM)
        sock.setsockopt(zmq.SNDHWM, HWM)
        sock.setsockopt(zmq.LINGER, 2000)
        deadline = time.monotonic() + 5.0  # a socket this process just closed may hold the port
        while True:
            try:
                sock.bind(f"tcp://{socket.gethostbyname(host)}:{port}")
                break
            except (zmq.ZMQError, OSError) as exc:
                if time.monotonic() < deadline and getattr(exc, "errno", None) == zmq.EADDRINUSE:
                    time.sleep(0.05)
                    continue
                sock.close(0)
                raise PserverError(
                    f"pserver {endpoint}: cannot listen on port {port}: {exc}"
                ) from None
        self.sock = sock
        self.monitor = sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self.poller = zmq.Poller()
        self.poller.register(sock, zmq.POLLIN)
        self.poller.register(self.monitor, zmq.POLLIN)
        self.peers: dict = {}
        self.refused = 0
        self.gone: list = []

    def close(self) -> None:
        try:
            self.sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self.monitor.close(0)
        self.sock.close()

    def _disconnected(self) -> None:
        from zmq.utils.monitor import recv_monitor_message

        while self.monitor.poll(0):
            fd = int(recv_monitor_message(self.monitor)["value"])
            for key, peer in list(self.peers.items()):
                if peer.fd == fd:
                    del self.peers[key]
                    if peer.authed:
                        self.gone.append(peer)

    def send(self, peer: Peer, msg: wire.Message) -> None:
        self.sock.send_multipart([peer.ident, *wire.encode(msg)], copy=False)

    def error(self, peer: Peer, text: str, seq: int = 0) -> None:
        self.send(peer, wire.Message(wire.ERROR, seq=seq, status=1, text=text))

    def poll(self, timeout: float) -> Any:
        """One event within ``timeout`` s: ``("message", peer, msg)``, ``("gone", peer, None)``,
        or None. Handshakes and refusals are handled here."""
        if not self.gone:
            ready = dict(self.poller.poll(int(timeout * 1000)))
            if self.monitor in ready:
                self._disconnected()
            if self.sock not in ready and not self.gone:
                return None
        if self.gone:
            return ("gone", self.gone.pop(0), None)
        frames = self.sock.recv_multipart(copy=False)
        if len(frames) < 2:
            return None
        key = (frames[0].bytes, frames[1].get(zmq.SRCFD))
        peer = self.peers.get(key)
        if peer is None:
            peer = self.peers[key] = Peer(key[0], key[1])
        try:
            msg = wire.decode(frames[1:], copy=False)
        except wire.WireError as exc:
            self._refuse(peer, f"malformed message: {exc}")
            return None
        if msg.kind == wire.HELLO:
            return self._hello(peer, msg)
        if msg.kind == wire.PROOF:
            return self._proof(peer, msg)
        if not peer.authed:
            self._refuse(peer, "not authenticated (no valid handshake on this connection)", msg.seq)
            return None
        if msg.trainer != peer.trainer:
            self._refuse(peer, f"trainer id {msg.trainer} differs from the handshake's", msg.seq)
            return None
        return ("message", peer, msg)

    def _refuse(self, peer: Peer, why: str, seq: int = 0) -> None:
        self.refused += 1
        peer.refused += 1
        if peer.refused <= 3:
            print(f"pserver {self.endpoint}: refused a message: {why}", file=sys.stderr, flush=True)
        try:
            self.error(peer, f"pserver {self.endpoint} refused the message: {why}", seq)
        except zmq.ZMQError:
            pass

    def _hello(self, peer: Peer, msg: wire.Message) -> None:
        cn = _bytes(msg, "nonce")
        if len(cn) != NONCE:
            self._refuse(peer, "bad hello")
            return None
        peer.trainer, peer.authed = msg.trainer, False
        peer.nonce = cn + os.urandom(NONCE)
        proof = _mac(self.key, b"server", peer.nonce, str(msg.trainer).encode())
        self.send(
            peer, _nonce_msg(wire.CHALLENGE, msg.trainer, nonce=peer.nonce[NONCE:], proof=proof)
        )
        return None

    def _proof(self, peer: Peer, msg: wire.Message) -> None:
        want = _mac(self.key, b"client", peer.nonce, str(peer.trainer).encode())
        if not peer.nonce or not hmac.compare_digest(want, _bytes(msg, "proof")):
            peer.nonce = b""
            self._refuse(
                peer, f"authentication failed for trainer {msg.trainer} (wrong {ENV_SECRET}?)"
            )
            return None
        peer.authed, peer.nonce = True, b""
        self.send(peer, wire.Message(wire.WELCOME, trainer=peer.trainer))
        return None


# every open client of this process: a closed connection to any of them ends a wait on another
_live: weakref.WeakSet = weakref.WeakSet()
_live_lock = threading.Lock()


class ZmqClient:
    """A trainer's connection to one pserver: requests are pipelined, replies come in order."""

    def __init__(self, endpoint: str, trainer_id: int, wait: float | None = None) -> None:
        host, port = split_endpoint(endpoint)
        self.endpoint = endpoint
        self.trainer = int(trainer_id)
        self.key = secret()
        self.ctx = zmq.Context.instance()
        sock = self.ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.MAXMSGSIZE, max_message())
        sock.setsockopt(zmq.LINGER, 2000)
        sock.setsockopt(zmq.RECONNECT_IVL, 50)
        self.monitor = sock.get_monitor_socket(zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED)
        sock.connect(f"tcp://{host}:{port}")
        self.sock = sock
        self.connected = False
        self.outstanding = 0
        self.seq = 0
        self.timeout = reply_timeout()
        self.lost = False  # the pserver closed this connection
        with _live_lock:
            _live.add(self)
        try:
            self._handshake(connect_timeout() if wait is None else wait)
        except BaseException:
            self.close(linger=0)
            raise

    def close(self, linger: int | None = None) -> None:
        with _live_lock:
            _live.discard(self)
            try:
                self.sock.disable_monitor()
            except zmq.ZMQError:
                pass
            self.monitor.close(0)
        self.sock.close(linger)

    def _read_monitor(self) -> None:
        """Note connections made and lost (the caller holds ``_live_lock``)."""
        from zmq.utils.monitor import recv_monitor_message

        while self.monitor.poll(0):
            ev = recv_monitor_message(self.monitor)["event"]
            if ev == zmq.EVENT_CONNECTED:
                self.connected = True
            elif ev == zmq.EVENT_DISCONNECTED and self.connected:
                self.connected, self.lost = False, True

    def _events(self) -> None:
        """Raise when this pserver, or another pserver this process talks to, closed its
        connection: a trainer waiting on one pserver (a sync barrier) would otherwise wait for
        ``OAR_PSERVER_TIMEOUT`` and blame the wrong one when another pserver dies."""
        with _live_lock:
            clients = sorted(_live, key=lambda c: (c.endpoint, c.trainer))
            for c in clients:
                c._read_monitor()
        lost = [c.endpoint for c in clients if c.lost]
        if not lost:
            return
        if self.lost and len(lost) == 1:
            where = "was talking to it"
        else:
            where = f"was waiting for pserver {self.endpoint}"
        names = "pserver " + ", ".join(dict.fromkeys(lost))
        raise PserverError(
            f"{names} closed the connection (the pserver process died or was stopped) while "
            f"trainer {self.trainer} {where}"
        )

    def _handshake(self, wait: float) -> None:
        cn = os.urandom(NONCE)
        self.post(_nonce_msg(wire.HELLO, self.trainer, nonce=cn))
        ch = self._reply(wait, f"no pserver answered at {self.endpoint} within {wait:g} s")
        sn = _bytes(ch, "nonce")
        want = _mac(self.key, b"server", cn + sn, str(self.trainer).encode())
        if ch.kind != wire.CHALLENGE or not hmac.compare_digest(want, _bytes(ch, "proof")):
            raise PserverError(
                f"pserver {self.endpoint} failed authentication (a different {ENV_SECRET}, or "
                f"not an oar pserver)"
            )
        proof = _mac(self.key, b"client", cn + sn, str(self.trainer).encode())
        self.post(_nonce_msg(wire.PROOF, self.trainer, proof=proof))
        self._reply(self.timeout, "")

    def post(self, msg: wire.Message) -> None:
        """Send without waiting; the reply is collected by a later :meth:`request` or :meth:`drain`.

        At most ``MAX_IN_FLIGHT`` replies wait uncollected: past that, the earlier ones are
        collected first (a pserver's ROUTER socket drops replies beyond the high-water marks)."""
        if self.outstanding >= MAX_IN_FLIGHT:
            self.drain()
        self.seq += 1
        frames = wire.encode(msg._replace(trainer=self.trainer, seq=self.seq))
        self.sock.send_multipart(frames, copy=False)
        self.outstanding += 1

    def _reply(
        self, timeout: float, what: str, copy: bool = True, raise_error: bool = True
    ) -> wire.Message:
        deadline = time.monotonic() + timeout
        # a reply already queued wins over a disconnection noticed since (a pserver that
        # answers COMPLETE and exits)
        while not self.sock.poll(0):
            self._events()
            left = deadline - time.monotonic()
            if left <= 0:
                raise PserverError(
                    what
                    or f"pserver {self.endpoint} did not answer trainer {self.trainer} within "
                    f"{timeout:g} s ({ENV_TIMEOUT}); is it alive?"
                )
            self.sock.poll(int(min(left, 0.2) * 1000) + 1)
        frames = self.sock.recv_multipart(copy=False)
        self.outstanding -= 1
        try:
            msg = wire.decode(frames, copy=copy)
        except wire.WireError as exc:
            raise PserverError(f"pserver {self.endpoint} sent a malformed reply: {exc}") from None
        if msg.kind == wire.ERROR and raise_error:
            raise PserverError(msg.text)
        return msg

    def drain(self) -> wire.Message | None:
        """Wait for every outstanding reply (then raise the first error); the last reply."""
        last = None
        first_error = None
        while self.outstanding:
            last = self._reply(self.timeout, "", raise_error=False)
            if last.kind == wire.ERROR and first_error is None:
                first_error = last.text
        if first_error is not None:
            raise PserverError(first_error)
        return last

    def request(self, msg: wire.Message) -> wire.Message:
        self.post(msg)
        last = self.drain()
        assert last is not None
        return last


class ZmqTransport:
    """The ``zmq`` transport: factories of the two ends."""

    name = "zmq"
    server = ZmqServer
    client = ZmqClient
