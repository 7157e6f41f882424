"""``fluid.contrib`` recurrent layers (Fluid 1.8's contrib.layers.rnn_impl): the LSTM and
GRU steps of its units and the padded multi-layer ``basic_lstm`` / ``basic_gru``.

``LSTMUnit`` / ``GRUUnit`` hold a step's parameters for static graph and dygraph alike (the
dygraph Layers ``BasicLSTMUnit`` / ``BasicGRUUnit`` in ``oar.dygraph.rnn_impl`` run the same
steps); gates are computed from ``concat([input, hidden]) @ W + b``:
LSTM gates {i, j (candidate), f, o} with ``forget_bias`` added to f; GRU gates {r, u}, then
the candidate from ``concat([input, r * hidden])``, ``h = u * h_prev + (1 - u) * c``.
The multi-layer functions unroll time in Python (static graph: the time dimension must be
known when the program is built); each direction is its own stack of layers.
"""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentTypeError
from oar.layer_helper import LayerHelper


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


class _Unit:
    """Parameters made on the first call (the input size is known then), named as Fluid's
    contrib units name theirs (``<scope>/BasicLSTMUnit_0.w_0``)."""

    kind = ""

    def __init__(self, name_scope: Any, hidden_size: int, param_attr: Any, bias_attr: Any,
                 gate_activation: Any, activation: Any, dtype: str) -> None:  # fmt: skip
        self._helper = LayerHelper(f"{name_scope}/{self.kind}" if name_scope else self.kind)
        self._hidden_size = hidden_size
        self._param_attr, self._bias_attr, self._dtype = param_attr, bias_attr, dtype
        self._gate_activation = _act(gate_activation, "sigmoid")
        self._activation = _act(activation, "tanh")
        self._params: list = []

    def _param(self, shape: list, is_bias: bool = False) -> Any:
        attr = self._bias_attr if is_bias else self._param_attr
        p = self._helper.create_parameter(attr, shape, self._dtype, is_bias)
        self._params.append(p)
        return p

    def parameters(self) -> list:
        return [p for p in self._params if p is not None]


class LSTMUnit(_Unit):
    """One LSTM step: ``(input, pre_hidden, pre_cell) -> (new_hidden, new_cell)``."""

    kind = "BasicLSTMUnit"

    def __init__(self, name_scope: Any, hidden_size: int, param_attr: Any = None,
                 bias_attr: Any = None, gate_activation: Any = None, activation: Any = None,
                 forget_bias: float = 1.0, dtype: str = "float32") -> None:  # fmt: skip
        super().__init__(
            name_scope, hidden_size, param_attr, bias_attr, gate_activation, activation, dtype
        )
        self._forget_bias = float(forget_bias)
        self._weight = None

    def __call__(self, input: Any, pre_hidden: Any, pre_cell: Any) -> tuple:
        if self._weight is None:
            h = self._hidden_size
            self._weight = self._param([int(input.shape[-1]) + h, 4 * h])
            self._bias = self._param([4 * h], is_bias=True)
        return lstm_step(self, input, pre_hidden, pre_cell, self._weight, self._bias)


class GRUUnit(_Unit):
    """One GRU step: ``(input, pre_hidden) -> new_hidden``."""

    kind = "BasicGRUUnit"

    def __init__(self, name_scope: Any, hidden_size: int, param_attr: Any = None,
                 bias_attr: Any = None, gate_activation: Any = None, activation: Any = None,
                 dtype: str = "float32") -> None:  # fmt: skip
        super().__init__(
            name_scope, hidden_size, param_attr, bias_attr, gate_activation, activation, dtype
        )
        self._weights: tuple = ()

    def __call__(self, input: Any, pre_hidden: Any) -> Any:
        if not self._weights:
            h, n = self._hidden_size, int(input.shape[-1]) + self._hidden_size
            self._weights = (
                self._param([n, 2 * h]),
                self._param([n, h]),
                self._param([2 * h], is_bias=True),
                self._param([h], is_bias=True),
            )
        return gru_step(self, input, pre_hidden, *self._weights)


def lstm_step(
    unit: Any, input: Any, pre_hidden: Any, pre_cell: Any, weight: Any, bias: Any
) -> tuple:
    """Gates {i, j, f, o} = concat([input, pre_hidden]) @ weight + bias; forget_bias on f."""
    L = _L()
    gates = L.matmul(L.concat([input, pre_hidden], 1), weight)
    if bias is not None:
        gates = L.elementwise_add(gates, bias)
    i, j, f, o = L.split(gates, num_or_sections=4, dim=-1)
    gate, act = unit._gate_activation, unit._activation
    forget = gate(L.scale(f, bias=unit._forget_bias))
    new_cell = L.elementwise_add(
        L.elementwise_mul(pre_cell, forget), L.elementwise_mul(gate(i), act(j))
    )
    return L.elementwise_mul(act(new_cell), gate(o)), new_cell


def gru_step(unit: Any, input: Any, pre_hidden: Any, gate_w: Any, cand_w: Any, gate_b: Any,
             cand_b: Any) -> Any:  # fmt: skip
    """{r, u} from concat([input, pre_hidden]); candidate from concat([input, r * pre_hidden]);
    ``u * pre_hidden + (1 - u) * candidate``."""
    L = _L()
    gates = L.matmul(L.concat([input, pre_hidden], 1), gate_w)
    if gate_b is not None:
        gates = L.elementwise_add(gates, gate_b)
    r, u = L.split(unit._gate_activation(gates), num_or_sections=2, dim=-1)
    cand = L.matmul(L.concat([input, L.elementwise_mul(r, pre_hidden)], 1), cand_w)
    if cand_b is not None:
        cand = L.elementwise_add(cand, cand_b)
    c = unit._activation(cand)
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
        return LSTMUnit(
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
        return GRUUnit(
            scope, hidden_size, param_attr, bias_attr, gate_activation, activation, dtype
        )

    out, (h,) = _run_stacks(
        "basic_gru", unit, input, [init_hidden], 1, hidden_size, num_layers,
        sequence_length, dropout_prob, bidirectional, batch_first, dtype,
    )  # fmt: skip
    return out, h
