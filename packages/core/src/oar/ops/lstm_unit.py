"""lstm_unit: one LSTM step on pre-projected gates X = [i, f, o, j] (Fluid's order):
c = sigmoid(f + forget_bias) * c_prev + sigmoid(i) * tanh(j), h = sigmoid(o) * tanh(c)."""

from __future__ import annotations

from oar.ops._infer import check_float, check_same_dtype
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    x, c = ins["X"], ins["C_prev"]
    check_float(ins, "X")
    check_same_dtype(ins, "X", "C_prev")
    if (
        len(x.shape) != 2
        or len(c.shape) != 2
        or (x.shape[1] >= 0 and c.shape[1] >= 0 and x.shape[1] != 4 * c.shape[1])
    ):
        raise ValueError(
            f"X must be [batch, 4 * D] for C_prev [batch, D], given X {list(x.shape)}, "
            f"C_prev {list(c.shape)}"
        )
    return {"C": c, "H": c}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "lstm_unit",
            ["X", "C_prev"],
            ["C", "H"],
            {"forget_bias": Attr(float, 0.0)},
            infer_shape=_infer,
            grad=GradSpec(("C@GRAD", "H@GRAD", "X", "C_prev", "C", "H"), ("X@GRAD", "C_prev@GRAD")),
            doc="one LSTM step on projected gates",
        )
    )
