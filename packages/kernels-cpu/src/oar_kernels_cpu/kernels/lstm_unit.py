"""numpy kernels of lstm_unit (one LSTM step, gates [i, f, o, j])."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _gates(x: np.ndarray, forget_bias: float) -> tuple:
    i, f, o, j = np.split(x, 4, axis=1)
    return _sigmoid(i), _sigmoid(f + forget_bias), _sigmoid(o), np.tanh(j)


@kernel("lstm_unit", FLOATS)
def lstm_unit(inputs, attrs):
    i, f, o, j = _gates(inputs["X"], attrs["forget_bias"])
    c = f * inputs["C_prev"] + i * j
    return {"C": c, "H": o * np.tanh(c)}


@kernel("lstm_unit_grad", FLOATS)
def lstm_unit_grad(inputs, attrs):
    c_prev, c = inputs["C_prev"], inputs["C"]
    i, f, o, j = _gates(inputs["X"], attrs["forget_bias"])
    dh = inputs.get("H@GRAD")
    dc = inputs.get("C@GRAD")
    dh = np.zeros_like(c) if dh is None else dh
    dc = np.zeros_like(c) if dc is None else dc
    tc = np.tanh(c)
    dc = dc + dh * o * (1 - tc * tc)
    dx = np.concatenate(
        [
            dc * j * i * (1 - i),
            dc * c_prev * f * (1 - f),
            dh * tc * o * (1 - o),
            dc * i * (1 - j * j),
        ],
        axis=1,
    )
    return {"X@GRAD": dx, "C_prev@GRAD": dc * f}
