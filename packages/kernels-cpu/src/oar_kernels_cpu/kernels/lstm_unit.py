"""numpy kernels of lstm_unit (one LSTM step, gates [i, f, o, j])."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel

xp = array_module(__name__)


def _sigmoid(z):
    return 1.0 / (1.0 + xp.exp(-z))


def _gates(x: xp.ndarray, forget_bias: float) -> tuple:
    i, f, o, j = xp.split(x, 4, axis=1)
    return _sigmoid(i), _sigmoid(f + forget_bias), _sigmoid(o), xp.tanh(j)


@kernel("lstm_unit", FLOATS)
def lstm_unit(inputs, attrs):
    i, f, o, j = _gates(inputs["X"], attrs["forget_bias"])
    c = f * inputs["C_prev"] + i * j
    return {"C": c, "H": o * xp.tanh(c)}


@kernel("lstm_unit_grad", FLOATS)
def lstm_unit_grad(inputs, attrs):
    c_prev, c = inputs["C_prev"], inputs["C"]
    i, f, o, j = _gates(inputs["X"], attrs["forget_bias"])
    dh = inputs.get("H@GRAD")
    dc = inputs.get("C@GRAD")
    dh = xp.zeros_like(c) if dh is None else dh
    dc = xp.zeros_like(c) if dc is None else dc
    tc = xp.tanh(c)
    dc = dc + dh * o * (1 - tc * tc)
    dx = xp.concatenate(
        [
            dc * j * i * (1 - i),
            dc * c_prev * f * (1 - f),
            dh * tc * o * (1 - o),
            dc * i * (1 - j * j),
        ],
        axis=1,
    )
    return {"X@GRAD": dx, "C_prev@GRAD": dc * f}
