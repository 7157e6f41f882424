"""Kernels of the parameter-server ops (see ``oar_dist.ops.pserver``).

Requests are pipelined: ``send`` and ``send_barrier`` post their messages and
return; ``recv`` posts one ``GET`` per pserver and then waits for every reply
of that connection in order, so an error answered to an earlier ``send`` is
raised there, naming the pserver.
"""

from __future__ import annotations

import numpy as np

from oar_dist.pserver import half_async, wire
from oar_dist.pserver.client import get_client

DTYPES = ("float32", "float64", "int32", "int64")
_EMPTY = np.empty(0, dtype=np.uint8)


def _by_endpoint(op: str, names: list, eps: list, n: int) -> dict:
    if len(names) != n or len(eps) != n:
        raise ValueError(
            f"{op}: {n} variables but {len(names)} names and {len(eps)} endpoints in the attrs"
        )
    groups: dict = {}
    for i, ep in enumerate(eps):
        groups.setdefault(ep, []).append(i)
    return groups


def send(inputs, attrs):
    xs = inputs["X"]
    names = attrs["send_varnames"]
    groups = _by_endpoint("send", names, attrs["epmap"], len(xs))
    tid = attrs["trainer_id"]
    if attrs["half_async"]:  # queued; sent merged by send_barrier
        half_async.merger(tid).add(names, list(xs), attrs["epmap"])
        return {}
    for ep, idx in groups.items():
        tensors = tuple((names[i], xs[i]) for i in idx)
        get_client(ep, tid).post(wire.Message(wire.SEND, tensors=tensors))
    return {}


def send_barrier(inputs, attrs):
    tid = attrs["trainer_id"]
    if attrs["half_async"]:  # every K-th step: the merged gradients, then the barrier
        half_async.merger(tid).barrier(attrs["endpoints"])
        return {}
    for ep in attrs["endpoints"]:
        get_client(ep, tid).post(wire.Message(wire.BARRIER))
    return {}


def recv(inputs, attrs):
    names = attrs["varnames"]
    groups = _by_endpoint("recv", names, attrs["epmap"], len(names))
    tid = attrs["trainer_id"]
    m = half_async.merger(tid) if attrs["half_async"] else None
    if m is not None and not m.fresh and all(n in m.cache for n in names):
        return {"Out": [m.cache[n] for n in names]}  # no flush this step: the same parameters
    for ep, idx in groups.items():
        want = tuple((names[i], _EMPTY) for i in idx)
        get_client(ep, tid).post(wire.Message(wire.GET, tensors=want))
    out: list = [None] * len(names)
    for ep, idx in groups.items():
        reply = get_client(ep, tid).drain()
        got = dict(reply.tensors) if reply is not None else {}
        for i in idx:
            if names[i] not in got:
                raise ValueError(f"recv: pserver {ep} did not return variable '{names[i]}'")
            out[i] = got[names[i]]
    if m is not None:
        m.cache.update(zip(names, out))
        m.fresh = False
    return {"Out": out}


def fetch_barrier(inputs, attrs):
    tid = attrs["trainer_id"]
    for ep in attrs["endpoints"]:
        get_client(ep, tid).drain()
    return {}


def split_byref(inputs, attrs):
    x = inputs["X"]
    out, at = [], 0
    for s in attrs["sections"]:
        out.append(x[at : at + s])
        at += s
    return {"Out": out}


def listen_and_serv(inputs, attrs):
    from oar_dist.pserver.server import serve

    return {"Out": serve(inputs.get("X") or [], attrs)}


def kernels():
    """(op type, dtypes, kernel, selected_rows) for the plugin to register."""
    return [
        ("send", DTYPES, send, True),
        ("send_barrier", DTYPES, send_barrier, False),
        ("recv", DTYPES, recv, False),
        ("fetch_barrier", DTYPES, fetch_barrier, False),
        ("split_byref", DTYPES, split_byref, False),
        ("listen_and_serv", DTYPES, listen_and_serv, True),
    ]
