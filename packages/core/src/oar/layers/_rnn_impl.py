"""``fluid.contrib`` recurrent layers (Fluid 1.8's contrib.layers.rnn_impl): the units
``BasicLSTMUnit`` / ``BasicGRUUnit`` and the padded multi-layer ``basic_lstm`` / ``basic_gru``.

The units are dygraph Layers that also work in static graph (their ops go to the current
program); gates are computed from ``concat([input, hidden]) @ W + b``:
LSTM gates {i, j (candidate), f, o} with ``forget_bias`` added to f; GRU gates {r, u}, then
the candidate from ``concat([input, r * hidden])``, ``h = u * h_prev + (1 - u) * c``.
The multi-layer functions unroll time in Python (static graph: the time dimension must be
known when the program is built); each direction is its own stack of layers.
"""

from __future__ import annotations

from typing import Any

from oar.dygraph.layers import Layer
from oar.errors import ArgumentTypeError

__all__ = ["BasicLSTMUnit", "BasicGRUUnit", "basic_lstm", "basic_gru"]


def _L():
    from oar import fluid

    return fluid.layers


def _act(fn: Any, default: str):
    if fn is None:
        return getattr(_L(), default)
    if not callable(fn):
        raise ArgumentTypeError(
            "basic rnn unit",
            f"activation must be a callable (e.g. fluid.layers.tanh), given {fn!r}",
        )
    return fn


class BasicLSTMUnit(Layer):
    """One LSTM step: ``forward(input, pre_hidden, pre_cell) -> (new_hidden, new_cell)``."""

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

    def _build(self, input_size: int) -> None:
        h = self._hidden_size
        self._weight = self.create_parameter([input_size + h, 4 * h], self._param_attr, self._dtype)
        self._bias = self.create_parameter([4 * h], self._bias_attr, self._dtype, is_bias=True)

    def forward(self, input: Any, pre_hidden: Any, pre_cell: Any) -> tuple:
        L = _L()
        if self._weight is None:
            self._build(int(input.shape[-1]))
        gates = L.matmul(L.concat([input, pre_hidden], 1), self._weight)
        if self._bias is not None:
            gates = L.elementwise_add(gates, self._bias)
        i, j, f, o = L.split(gates, num_or_sections=4, dim=-1)
        forget = self._gate_activation(L.scale(f, bias=self._forget_bias))
        new_cell = L.elementwise_add(
            L.elementwise_mul(pre_cell, forget),
            L.elementwise_mul(self._gate_activation(i), self._activation(j)),
        )
        new_hidden = L.elementwise_mul(self._activation(new_cell), self._gate_activation(o))
        return new_hidden, new_cell


class BasicGRUUnit(Layer):
    """One GRU step: ``forward(input, pre_hidden) -> new_hidden``."""

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

    def _build(self, input_size: int) -> None:
        h, d = self._hidden_size, self._dtype
        self._gate_weight = self.create_parameter([input_size + h, 2 * h], self._param_attr, d)
        self._candidate_weight = self.create_parameter([input_size + h, h], self._param_attr, d)
        self._gate_bias = self.create_parameter([2 * h], self._bias_attr, d, is_bias=True)
        self._candidate_bias = self.create_parameter([h], self._bias_attr, d, is_bias=True)

    def forward(self, input: Any, pre_hidden: Any) -> Any:
        L = _L()
        if self._gate_weight is None:
            self._build(int(input.shape[-1]))
        gates = L.matmul(L.concat([input, pre_hidden], 1), self._gate_weight)
        if self._gate_bias is not None:
            gates = L.elementwise_add(gates, self._gate_bias)
        r, u = L.split(self._gate_activation(gates), num_or_sections=2, dim=-1)
        cand = L.matmul(
            L.concat([input, L.elementwise_mul(r, pre_hidden)], 1), self._candidate_weight
        )
        if self._candidate_bias is not None:
            cand = L.elementwise_add(cand, self._candidate_bias)
        c = self._activation(cand)
        # u * h_prev + (1 - u) * c  ==  c + u * (h_prev - c)
        return L.elementwise_add(c, L.elementwise_mul(u, L.elementwise_sub(pre_hidden, c)))


def _time_steps(layer: str, x: Any) -> int:
    steps = int(x.shape[0])
    if steps < 0:
        raise ArgumentTypeError(
            layer,
            f"the time dimension of input must be known when the program is built "
            f"(oar unrolls the recurrence), given shape {list(x.shape)}",
        )
    return steps


def _masked(new: Any, old: Any, mask: Any) -> Any:
    """``new`` where ``mask`` [batch] is 1, ``old`` where it is 0."""
    L = _L()
    return L.elementwise_add(old, L.elementwise_mul(L.elementwise_sub(new, old), mask, axis=0))


def _stack_direction(units: list, steps: list, init: list, masks: Any, dropout: float) -> tuple:
    """Run a stack of units over time-major ``steps``; ``init`` per layer: tuple of states."""
    L = _L()
    finals = []
    for k, unit in enumerate(units):
        states = init[k]
        outs = []
        for t, x in enumerate(steps):
            new = unit(x, *states)
            new = new if isinstance(new, tuple) else (new,)
            if masks is not None:
                new = tuple(_masked(n, s, masks[t]) for n, s in zip(new, states))
            states = new
            outs.append(new[0])
        finals.append(states)
        steps = outs
        if dropout and k + 1 < len(units):
            steps = [
                L.dropout(o, dropout_prob=dropout, dropout_implementation="upscale_in_train")
                for o in outs
            ]
    return steps, finals


def _run_stacks(
    layer: str,
    make_unit: Any,
    input: Any,
    inits: list,
    n_states: int,
    hidden_size: int,
    num_layers: int,
    sequence_length: Any,
    dropout_prob: float,
    bidirectional: bool,
    batch_first: bool,
    dtype: str,
) -> tuple:
    L = _L()
    if batch_first:
        input = L.transpose(input, [1, 0, 2])
    steps_n = _time_steps(layer, input)
    steps = L.unstack(input, axis=0, num=steps_n)
    masks = None
    if sequence_length is not None:
        mask = L.sequence_mask(sequence_length, maxlen=steps_n, dtype=dtype)
        masks = L.unstack(L.transpose(mask, [1, 0]), axis=0, num=steps_n)
    dirs = 2 if bidirectional else 1
    states = []  # per state kind: [layers * dirs] initial tensors, index layer * dirs + dir
    for s in range(n_states):
        given = inits[s]
        if given is None:
            zero = L.fill_constant_batch_size_like(steps[0], [-1, hidden_size], dtype, 0.0)
            states.append([zero] * (num_layers * dirs))
        else:
            states.append(L.unstack(given, axis=0, num=num_layers * dirs))
    outs, finals = [], []
    for d in range(dirs):
        units = [make_unit(f"{layer}_layers_{d * num_layers + k}") for k in range(num_layers)]
        init = [tuple(states[s][k * dirs + d] for s in range(n_states)) for k in range(num_layers)]
        seq = steps if d == 0 else steps[::-1]
        m = None if masks is None else (masks if d == 0 else masks[::-1])
        o, f = _stack_direction(units, seq, init, m, dropout_prob)
        outs.append(o if d == 0 else o[::-1])
        finals.append(f)
    step_out = (
        [L.concat([outs[0][t], outs[1][t]], 1) for t in range(steps_n)] if dirs == 2 else outs[0]
    )
    out = L.stack(step_out, axis=1 if batch_first else 0)
    last = [
        L.stack([finals[d][k][s] for k in range(num_layers) for d in range(dirs)], axis=0)
        for s in range(n_states)
    ]
    return out, last


def basic_lstm(
    input: Any,
    init_hidden: Any,
    init_cell: Any,
    hidden_size: int,
    num_layers: int = 1,
    sequence_length: Any = None,
    dropout_prob: float = 0.0,
    bidirectional: bool = False,
    batch_first: bool = True,
    param_attr: Any = None,
    bias_attr: Any = None,
    gate_activation: Any = None,
    activation: Any = None,
    forget_bias: float = 1.0,
    dtype: str = "float32",
    name: str = "basic_lstm",
) -> tuple:
    """A multi-layer (bi)LSTM over padded ``input`` [batch, time, size] (``batch_first``).
    Returns ``(rnn_out, last_hidden, last_cell)``; the last states are
    [num_layers * directions, batch, hidden_size], index ``layer * directions + direction``."""

    def unit(scope):
        return BasicLSTMUnit(
            scope,
            hidden_size,
            param_attr,
            bias_attr,
            gate_activation,
            activation,
            forget_bias,
            dtype,
        )

    out, (h, c) = _run_stacks(
        "basic_lstm", unit, input, [init_hidden, init_cell], 2, hidden_size, num_layers,
        sequence_length, dropout_prob, bidirectional, batch_first, dtype,
    )  # fmt: skip
    return out, h, c


def basic_gru(
    input: Any,
    init_hidden: Any,
    hidden_size: int,
    num_layers: int = 1,
    sequence_length: Any = None,
    dropout_prob: float = 0.0,
    bidirectional: bool = False,
    batch_first: bool = True,
    param_attr: Any = None,
    bias_attr: Any = None,
    gate_activation: Any = None,
    activation: Any = None,
    dtype: str = "float32",
    name: str = "basic_gru",
) -> tuple:
    """A multi-layer (bi)GRU over padded ``input``; returns ``(rnn_out, last_hidden)``."""

    def unit(scope):
        return BasicGRUUnit(
            scope, hidden_size, param_attr, bias_attr, gate_activation, activation, dtype
        )

    out, (h,) = _run_stacks(
        "basic_gru", unit, input, [init_hidden], 1, hidden_size, num_layers,
        sequence_length, dropout_prob, bidirectional, batch_first, dtype,
    )  # fmt: skip
    return out, h
