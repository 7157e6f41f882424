"""The trainer's connections to its pservers: one per endpoint per process, shared by every op.

``exe.close()`` (the ``oar_executor_closed`` hook) sends ``COMPLETE`` to every
pserver this process talked to and closes the connections, as Fluid's
``Executor.close`` tells the pservers a trainer is done.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from oar_dist.pserver import wire

ENV_TRANSPORT = "OAR_PSERVER_TRANSPORT"

_lock = threading.Lock()
_clients: dict = {}


def transport() -> Any:
    """The transport class named by ``OAR_PSERVER_TRANSPORT`` (default ``zmq``)."""
    from oar.api import registries

    return registries().pserver_transports.get(os.environ.get(ENV_TRANSPORT, "zmq"))


def get_client(endpoint: str, trainer_id: int) -> Any:
    """This process's connection to ``endpoint`` (made, and authenticated, on first use)."""
    key = (endpoint, int(trainer_id))
    c = _clients.get(key)
    if c is None:
        with _lock:
            c = _clients.get(key)
            if c is None:
                c = _clients[key] = transport().client(endpoint, trainer_id)
    return c


def close_all(notify: bool = True) -> None:
    """Tell every connected pserver this trainer completed (``notify``), then disconnect."""
    with _lock:
        clients = list(_clients.values())
        _clients.clear()
    first = None
    if notify:  # half-async steps still queued go first
        from oar_dist.pserver import half_async

        try:
            half_async.flush_all()
        except Exception as exc:
            first = exc
    for c in clients:
        try:
            if notify:
                c.drain()
                c.request(wire.Message(wire.COMPLETE))
        except Exception as exc:  # every pserver gets its notice even if one failed
            first = first or exc
        finally:
            c.close()
    if first is not None:
        raise first


def connected() -> list:
    return sorted(_clients)
