"""``fluid.contrib``'s ``BasicLSTMUnit`` and ``BasicGRUUnit`` as dygraph Layers (their
parameters are the Layer's, found by ``parameters()`` and ``state_dict()``); the step math is
``oar.layers._rnn_impl``'s, shared with the static cells."""

from __future__ import annotations

from typing import Any

from oar.dygraph.layers import Layer
from oar.layers._rnn_impl import _act, gru_step, lstm_step

__all__ = ["BasicLSTMUnit", "BasicGRUUnit"]


class BasicLSTMUnit(Layer):
    """One LSTM step: ``forward(input, pre_hidden, pre_cell) -> (new_hidden, new_cell)``;
    weight [input_size + hidden_size, 4 * hidden_size] (gates i, j, f, o), bias [4 * hidden]."""

    def __init__(
        self,
        name_scope: Any,
        hidden_size: int,
        param_attr: Any = None,
        bias_attr: Any = None,
        gate_activation: Any = None,
        activation: Any = None,
        forget_bias: float = 1.0,
        dtype: str = "float32",
    ) -> None:
        super().__init__(f"{name_scope}/BasicLSTMUnit" if name_scope else None, dtype)
        self._hidden_size = hidden_size
        self._param_attr, self._bias_attr = param_attr, bias_attr
        self._gate_activation = _act(gate_activation, "sigmoid")
        self._activation = _act(activation, "tanh")
        self._forget_bias = float(forget_bias)
        self._weight = self._bias = None

    def forward(self, input: Any, pre_hidden: Any, pre_cell: Any) -> tuple:
        if self._weight is None:
            h = self._hidden_size
            shape = [int(input.shape[-1]) + h, 4 * h]
            self._weight = self.create_parameter(shape, self._param_attr, self._dtype)
            self._bias = self.create_parameter([4 * h], self._bias_attr, self._dtype, is_bias=True)
        return lstm_step(self, input, pre_hidden, pre_cell, self._weight, self._bias)


class BasicGRUUnit(Layer):
    """One GRU step: ``forward(input, pre_hidden) -> new_hidden``; gate weight
    [input_size + hidden, 2 * hidden] (r, u), candidate weight [input_size + hidden, hidden]."""

    def __init__(
        self,
        name_scope: Any,
        hidden_size: int,
        param_attr: Any = None,
        bias_attr: Any = None,
        gate_activation: Any = None,
        activation: Any = None,
        dtype: str = "float32",
    ) -> None:
        super().__init__(f"{name_scope}/BasicGRUUnit" if name_scope else None, dtype)
        self._hidden_size = hidden_size
        self._param_attr, self._bias_attr = param_attr, bias_attr
        self._gate_activation = _act(gate_activation, "sigmoid")
        self._activation = _act(activation, "tanh")
        self._gate_weight = None

    def forward(self, input: Any, pre_hidden: Any) -> Any:
        if self._gate_weight is None:
            h, d = self._hidden_size, self._dtype
            n = int(input.shape[-1]) + h
            self._gate_weight = self.create_parameter([n, 2 * h], self._param_attr, d)
            self._candidate_weight = self.create_parameter([n, h], self._param_attr, d)
            self._gate_bias = self.create_parameter([2 * h], self._bias_attr, d, is_bias=True)
            self._candidate_bias = self.create_parameter([h], self._bias_attr, d, is_bias=True)
        return gru_step(
            self,
            input,
            pre_hidden,
            self._gate_weight,
            self._candidate_weight,
            self._gate_bias,
            self._candidate_bias,
        )
