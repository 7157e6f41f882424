"""gru_unit: one GRU step on a pre-projected input (Fluid's layout and formulas).

Weight [D, 3D] holds, in memory order, the [D, 2D] update/reset-gate weights
followed by the [D, D] candidate weights (Fluid slices the buffer, not the
columns). ``activation`` / ``gate_activation`` are Fluid's int codes:
0 identity, 1 sigmoid, 2 tanh, 3 relu.
"""

from __future__ import annotations

from oar.ops._infer import check_float, compatible
from oar.registry import Attr, GradSpec, OpDef, VarMeta

ACTIVATIONS = {"identity": 0, "sigmoid": 1, "tanh": 2, "relu": 3}


def _act_check(v):
    return None if v in (0, 1, 2, 3) else "must be 0 (identity), 1 (sigmoid), 2 (tanh) or 3 (relu)"


def _infer(ins, attrs):
    check_float(ins, "Input")
    x, h, w, b = ins["Input"], ins["HiddenPrev"], ins["Weight"], ins.get("Bias")
    if len(x.shape) != 2 or len(h.shape) != 2 or len(w.shape) != 2:
        raise ValueError(
            f"Input, HiddenPrev and Weight must be 2-D, given {list(x.shape)}, {list(h.shape)}, "
            f"{list(w.shape)}"
        )
    d = h.shape[1]
    if d >= 0 and not compatible(x.shape[1], 3 * d):
        raise ValueError(
            f"Input must be [N, 3 * D] with D = HiddenPrev's width {d}, given {list(x.shape)}"
        )
    if d >= 0 and not (compatible(w.shape[0], d) and compatible(w.shape[1], 3 * d)):
        raise ValueError(f"Weight must be [D, 3 * D] = [{d}, {3 * d}], given {list(w.shape)}")
    if (
        b is not None
        and d >= 0
        and not (compatible(b.shape[0], 1) and compatible(b.shape[-1], 3 * d))
    ):
        raise ValueError(f"Bias must be [1, 3 * D] = [1, {3 * d}], given {list(b.shape)}")
    n = x.shape[0]
    return {
        "Gate": VarMeta((n, 3 * d if d >= 0 else -1), x.dtype),
        "ResetHiddenPrev": VarMeta((n, d), x.dtype),
        "Hidden": VarMeta((n, d), x.dtype),
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "gru_unit",
            ["Input", "HiddenPrev", "Weight", "Bias?"],
            ["Gate", "ResetHiddenPrev", "Hidden"],
            {
                "activation": Attr(int, 2, _act_check),
                "gate_activation": Attr(int, 1, _act_check),
                "origin_mode": Attr(bool, False),
            },
            infer_shape=_infer,
            grad=GradSpec(
                ("Input", "HiddenPrev", "Weight", "Bias", "Gate", "ResetHiddenPrev", "Hidden@GRAD"),
                ("Input@GRAD", "HiddenPrev@GRAD", "Weight@GRAD", "Bias@GRAD"),
            ),
            doc="One GRU step; only Hidden's gradient drives the backward pass, as in Fluid.",
        )
    )
