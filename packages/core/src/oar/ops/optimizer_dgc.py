"""``dgc_momentum``: deep gradient compression (Lin et al. 2018) with momentum correction.

Before ``rampup_begin_step`` it is a momentum update. Afterwards, per parameter:
``u = m * u + g`` (Nesterov: ``u = m * (u + g)``, ``v += u + g``), ``v += u``; the
top ``1 - sparsity`` fraction of ``|v|`` is applied (``param -= lr * v[mask]``) and
cleared from ``u`` and ``v``; the rest keeps accumulating. ``sparsity`` ramps through its
list over ``rampup_step`` steps. One process here: the encoded gradient needs no all-reduce.
"""

from __future__ import annotations

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
