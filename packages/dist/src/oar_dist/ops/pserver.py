"""Parameter-server op definitions (Fluid's names and slots).

Trainer side: ``send`` (gradients to their pservers, pipelined), ``send_barrier``
(this trainer's step is complete), ``recv`` (parameters back; in sync mode the
pserver answers once the step's update is applied), ``fetch_barrier`` and
``split_byref`` (a gradient cut into row blocks for sliced parameters; the
parameter is put back with ``concat``). Pserver side: ``listen_and_serv`` (the serving loop; its
inputs are the variables this pserver owns and its outputs their final values).

Control variables (``Out`` of send / send_barrier, ``X`` of recv) only order
the ops, as in Fluid; they hold nothing.
"""

from __future__ import annotations

from oar.api import Attr, OpDef, VarMeta

_TRAINER = {"trainer_id": Attr(int, 0)}


def _split_byref_shape(ins, attrs):
    x = ins["X"]
    sections = attrs["sections"]
    if not x.shape:
        raise ValueError("split_byref: X must have at least one dim")
    if x.shape[0] >= 0 and sum(sections) != x.shape[0]:
        raise ValueError(
            f"split_byref: sections {sections} must add up to X's first dim {x.shape[0]}"
        )
    return {"Out": [VarMeta((s,) + tuple(x.shape[1:]), x.dtype) for s in sections]}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "send",
            ["X*"],
            ["Out*?"],
            dict(
                _TRAINER,
                epmap=Attr(list, []),
                send_varnames=Attr(list, []),
                sections=Attr(list, []),
                sync_mode=Attr(bool, True),
                half_async=Attr(bool, False),
            ),
            doc="post X[i] (dense or SelectedRows) as send_varnames[i] to pserver epmap[i]",
        )
    )
    registry.register_op(
        OpDef(
            "send_barrier",
            ["X*?"],
            ["Out*?"],
            dict(_TRAINER, endpoints=Attr(list, []), half_async=Attr(bool, False)),
            doc="tell every pserver in endpoints that this trainer sent its step's gradients",
        )
    )
    registry.register_op(
        OpDef(
            "recv",
            ["X*?"],
            ["Out*"],
            dict(
                _TRAINER,
                epmap=Attr(list, []),
                varnames=Attr(list, []),
                half_async=Attr(bool, False),
            ),
            doc="Out[i] = variable varnames[i] of pserver epmap[i] (after the step's update)",
        )
    )
    registry.register_op(
        OpDef(
            "fetch_barrier",
            ["X*?"],
            ["Out*?"],
            dict(_TRAINER, endpoints=Attr(list, [])),
            doc="every recv of the step is complete (the replies were waited for by recv)",
        )
    )
    registry.register_op(
        OpDef(
            "split_byref",
            ["X"],
            ["Out*"],
            {"sections": Attr(list, [])},
            infer_shape=_split_byref_shape,
            doc="Out[i] = rows of X in block i (views: no copy)",
        )
    )
    registry.register_op(
        OpDef(
            "geo_sgd_communicate",
            ["X*"],
            ["Out*"],
            dict(
                _TRAINER,
                epmap=Attr(list, []),
                varnames=Attr(list, []),
                trainers=Attr(int, 1),
                push_nums=Attr(int, 100),
                init=Attr(bool, False),
            ),
            doc="GEO-SGD: every push_nums-th step, push each parameter's change / trainers to "
            "its pserver and continue from the pserver's value",
        )
    )
    registry.register_op(
        OpDef(
            "listen_and_serv",
            ["X*?"],
            ["Out*?"],
            {
                "endpoint": Attr(str, "127.0.0.1:6174"),
                "Fanin": Attr(int, 1),
                "sync_mode": Attr(bool, True),
                "distributed_mode": Attr(int, 0),
                "var_names": Attr(list, []),
                "grad_to_block_id": Attr(list, []),
                "optimize_programs": Attr(str, "[]"),
                "lr_program": Attr(str, ""),
                "tables": Attr(list, []),
                "table_specs": Attr(str, ""),
                "transport": Attr(str, "zmq"),
            },
            doc="serve the variables X (named var_names) to Fanin trainers until every one closed",
        )
    )
