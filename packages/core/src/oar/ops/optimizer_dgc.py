"""``dgc_momentum``: deep gradient compression (Lin et al. 2018) with momentum correction.

Before ``rampup_begin_step`` it is a momentum update. Afterwards, per parameter:
``u = m * u + g`` (Nesterov: ``u = m * (u + g)``, ``v += u + g``), ``v += u``; the
top ``1 - sparsity`` fraction of ``|v|`` is applied (``param -= lr * v[mask]``) and
cleared from ``u`` and ``v``; the rest keeps accumulating. ``sparsity`` ramps through its
list over ``rampup_step`` steps. One process here: the encoded gradient needs no all-reduce.

With several trainers the work is split around the exchange: ``dgc`` does the local
momentum correction and encodes the top-k of ``v`` as (``EncodeIndex``, ``EncodeValue``)
(before the ramp-up: the whole gradient); two ``c_allgather`` ops (oar-dist) exchange them;
``dgc_apply`` sums the gathered pieces into a dense gradient and applies it: momentum
before the ramp-up, a plain step after it (the momentum is already in ``v``).
"""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import Attr, OpDef


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "dgc_momentum",
            ["Param", "Grad", "U", "V", "LearningRate", "CurrentStep"],
            ["ParamOut", "UOut", "VOut"],
            {
                "mu": Attr(float, 0.9),
                "use_nesterov": Attr(bool, False),
                "sparsity": Attr(list, [0.999]),
                "rampup_begin_step": Attr(float, 0.0),
                "rampup_step": Attr(float, 1.0),
            },
            kernel_dtype="Param",
        )
    )
    registry.register_op(
        OpDef(
            "dgc",
            ["Grad", "U", "V", "CurrentStep"],
            ["UOut", "VOut", "EncodeIndex", "EncodeValue"],
            dict(_RAMP, mu=Attr(float, 0.9), use_nesterov=Attr(bool, False)),
            infer_shape=_infer_encode,
            kernel_dtype="Grad",
        )
    )
    registry.register_op(
        OpDef(
            "dgc_apply",
            ["Param", "U", "Index", "Value", "LearningRate", "CurrentStep"],
            ["ParamOut", "UOut"],
            {
                "mu": Attr(float, 0.9),
                "use_nesterov": Attr(bool, False),
                "rampup_begin_step": Attr(float, 0.0),
            },
            kernel_dtype="Param",
        )
    )


_RAMP = {
    "sparsity": Attr(list, [0.999]),
    "rampup_begin_step": Attr(float, 0.0),
    "rampup_step": Attr(float, 1.0),
}


def _infer_encode(ins, attrs):
    g = ins["Grad"]
    return {
        "UOut": ins["U"],
        "VOut": ins["V"],
        "EncodeIndex": meta([-1], "int64"),
        "EncodeValue": meta([-1], g.dtype),
    }
