"""GEO-SGD's trainer side (``StrategyFactory.create_geo_strategy(update_frequency)``).

Trainers run their optimizer locally. ``geo_sgd_communicate`` ends each step: every
``push_nums``-th call it sends each parameter's change since the last exchange, divided
by the number of trainers (``<param>.delta``), to the parameter's pserver, which adds it
(``sum``), and reads the parameters back: the trainer continues from the pservers' values,
which hold every trainer's changes. With ``init`` (the startup program) it only records
the starting values.
"""

from __future__ import annotations

import numpy as np

from oar_dist.pserver import wire
from oar_dist.pserver.client import get_client

_EMPTY = np.empty(0, dtype=np.uint8)
_state: dict = {}  # (trainer id, parameter names) -> {"step": int, "old": [arrays]}


def geo_sgd_communicate(inputs, attrs):
    xs = [np.asarray(x) for x in inputs["X"]]
    names, eps, tid = attrs["varnames"], attrs["epmap"], attrs["trainer_id"]
    if len(names) != len(xs) or len(eps) != len(xs):
        raise ValueError(
            f"geo_sgd_communicate: {len(xs)} parameters but {len(names)} names and {len(eps)} endpoints"
        )
    key = (tid, tuple(names))
    if attrs["init"] or key not in _state:
        _state[key] = {"step": 0, "old": [x.copy() for x in xs]}
        return {"Out": xs}
    st = _state[key]
    st["step"] += 1
    if st["step"] % attrs["push_nums"]:
        return {"Out": xs}
    scale = 1.0 / attrs["trainers"]
    groups: dict = {}
    for i, ep in enumerate(eps):
        groups.setdefault(ep, []).append(i)
    for ep, idx in groups.items():
        deltas = tuple(
            (names[i] + ".delta", (xs[i] - st["old"][i]) * xs[i].dtype.type(scale)) for i in idx
        )
        client = get_client(ep, tid)
        client.post(wire.Message(wire.SEND, tensors=deltas))
        client.post(wire.Message(wire.GET, tensors=tuple((names[i], _EMPTY) for i in idx)))
    out: list = [None] * len(xs)
    for ep, idx in groups.items():
        reply = get_client(ep, tid).drain()
        got = dict(reply.tensors) if reply is not None else {}
        for i in idx:
            if names[i] not in got:
                raise ValueError(f"geo_sgd_communicate: pserver {ep} did not return '{names[i]}'")
            out[i] = np.array(got[names[i]])
    st["old"] = [o.copy() for o in out]
    return {"Out": out}


def kernels():
    return [("geo_sgd_communicate", ("float32", "float64"), geo_sgd_communicate, False)]
