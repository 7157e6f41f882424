"""Fluid 1.8's cell API: ``RNNCell`` (base), ``GRUCell``, ``LSTMCell`` and ``rnn``.

In dygraph ``rnn`` is a Python loop over the time steps; in static graph it is a ``While``
loop whose body (the cell's layers, built once) runs once per step, so the time dimension
may be unknown until run time. States may be nested (lists, tuples, namedtuples); with ``sequence_length`` a
sequence's states stop changing after its last step (its outputs past the end are computed
but not meaningful, as in Fluid).
"""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentTypeError
from oar.framework.mode import current_builder
from oar.layers._loop import StepLoop, step_count
from oar.layers._nest import flatten, map_structure
from oar.layers._rnn_impl import GRUUnit, LSTMUnit
from oar.layers._unroll import SharedParameters

__all__ = ["RNNCell", "GRUCell", "LSTMCell", "rnn"]


def _L():
    from oar import fluid

    return fluid.layers


def _is_shape(s: Any) -> bool:
    return isinstance(s, (list, tuple)) and all(
        isinstance(d, int) and not isinstance(d, bool) for d in s
    )


def _map_shapes(fn: Any, shape: Any, dtype: Any) -> Any:
    if _is_shape(shape):
        return fn(list(shape), dtype)
    if not isinstance(shape, (list, tuple)):
        raise ArgumentTypeError("RNNCell", f"a state shape must be a list of ints, given {shape!r}")
    dtypes = dtype if isinstance(dtype, (list, tuple)) else [dtype] * len(shape)
    out = [_map_shapes(fn, s, d) for s, d in zip(shape, dtypes)]
    return type(shape)(out) if not hasattr(shape, "_fields") else type(shape)(*out)


class RNNCell:
    """Base class of cells: ``call(inputs, states, **kwargs) -> (outputs, new_states)``;
    ``state_shape`` (without the batch dimension) sizes ``get_initial_states``."""

    def call(self, inputs: Any, states: Any, **kwargs: Any) -> tuple:
        raise NotImplementedError(f"{type(self).__name__} must define call(inputs, states)")

    def __call__(self, inputs: Any, states: Any, **kwargs: Any) -> tuple:
        return self.call(inputs, states, **kwargs)

    def get_initial_states(
        self,
        batch_ref: Any,
        shape: Any = None,
        dtype: Any = None,
        init_value: float = 0,
        batch_dim_idx: int = 0,
    ) -> Any:
        """States filled with ``init_value``, batch size taken from ``batch_ref``'s
        dimension ``batch_dim_idx``."""
        ref = flatten(batch_ref)[0]
        shape = self.state_shape if shape is None else shape
        dtype = self.state_dtype if dtype is None else dtype

        def make(s: list, d: Any) -> Any:
            return _L().fill_constant_batch_size_like(
                ref, [-1] + s, d, init_value, input_dim_idx=batch_dim_idx
            )

        return _map_shapes(make, shape, dtype)

    @property
    def state_shape(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define state_shape")

    @property
    def state_dtype(self) -> Any:
        return "float32"


class GRUCell(RNNCell):
    """A GRU step (contrib ``BasicGRUUnit``): states and outputs are the hidden state."""

    def __init__(
        self,
        hidden_size: int,
        param_attr: Any = None,
        bias_attr: Any = None,
        gate_activation: Any = None,
        activation: Any = None,
        dtype: str = "float32",
        name: str = "GRUCell",
    ) -> None:
        self.hidden_size = hidden_size
        self.gru_unit = GRUUnit(
            name, hidden_size, param_attr, bias_attr, gate_activation, activation, dtype
        )

    def call(self, inputs: Any, states: Any) -> tuple:
        new_hidden = self.gru_unit(inputs, states)
        return new_hidden, new_hidden

    @property
    def state_shape(self) -> list:
        return [self.hidden_size]


class LSTMCell(RNNCell):
    """An LSTM step (contrib ``BasicLSTMUnit``): states ``[hidden, cell]``, outputs hidden."""

    def __init__(
        self,
        hidden_size: int,
        param_attr: Any = None,
        bias_attr: Any = None,
        gate_activation: Any = None,
        activation: Any = None,
        forget_bias: float = 1.0,
        dtype: str = "float32",
        name: str = "LSTMCell",
    ) -> None:
        self.hidden_size = hidden_size
        self.lstm_unit = LSTMUnit(
            name,
            hidden_size,
            param_attr,
            bias_attr,
            gate_activation,
            activation,
            forget_bias,
            dtype,
        )

    def call(self, inputs: Any, states: Any) -> tuple:
        pre_hidden, pre_cell = states
        new_hidden, new_cell = self.lstm_unit(inputs, pre_hidden, pre_cell)
        return new_hidden, [new_hidden, new_cell]

    @property
    def state_shape(self) -> list:
        return [[self.hidden_size], [self.hidden_size]]


def _masked(new: Any, old: Any, mask: Any) -> Any:
    L = _L()
    return L.elementwise_add(old, L.elementwise_mul(L.elementwise_sub(new, old), mask, axis=0))


def _unstack_time(x: Any, axis: int) -> list:
    steps = int(x.shape[axis])
    if steps < 0:
        raise ArgumentTypeError(
            "rnn", f"the time dimension (axis {axis}) of inputs is unknown: {list(x.shape)}"
        )
    return _L().unstack(x, axis=axis, num=steps)


def _swap_batch_time(x: Any) -> Any:
    return _L().transpose(x, [1, 0] + list(range(2, len(x.shape))))


def rnn(
    cell: Any,
    inputs: Any,
    initial_states: Any = None,
    sequence_length: Any = None,
    time_major: bool = False,
    is_reverse: bool = False,
    **kwargs: Any,
) -> tuple:
    """Run ``cell`` over the time steps of ``inputs`` ([batch, time, ...], or [time, batch,
    ...] when ``time_major``; a nested structure of such tensors). Returns
    ``(outputs, final_states)``, outputs stacked along time in the same layout."""
    if not callable(cell):
        raise ArgumentTypeError("rnn", f"cell must be an RNNCell (callable), given {cell!r}")
    if initial_states is None:
        initial_states = cell.get_initial_states(
            batch_ref=inputs, batch_dim_idx=1 if time_major else 0
        )
    if current_builder().eager:
        return _rnn_eager(
            cell, inputs, initial_states, sequence_length, time_major, is_reverse, **kwargs
        )
    return _rnn_static(
        cell, inputs, initial_states, sequence_length, time_major, is_reverse, **kwargs
    )


def _rnn_static(
    cell: Any,
    inputs: Any,
    initial_states: Any,
    sequence_length: Any,
    time_major: bool,
    is_reverse: bool,
    **kwargs: Any,
) -> tuple:
    """A While loop over the time steps; the cell's layers are built once (its body)."""
    L = _L()
    seqs = inputs if time_major else map_structure(_swap_batch_time, inputs)
    steps = step_count(flatten(seqs)[0])
    mask = None
    n = int(flatten(seqs)[0].shape[0])
    if sequence_length is not None:
        dtype = flatten(initial_states)[0].dtype
        mask = L.sequence_mask(sequence_length, maxlen=n if n >= 0 else steps, dtype=dtype)
        mask = L.transpose(mask, [1, 0])
    if is_reverse:
        seqs = map_structure(lambda x: L.reverse(x, axis=[0]), seqs)
        mask = None if mask is None else L.reverse(mask, axis=[0])
    loop = StepLoop()
    states = loop.carry(initial_states)
    with loop.body(L.less_than(loop.i, steps), lambda i: L.less_than(i, steps)):
        out, new_states = cell(map_structure(loop.row, seqs), states, **kwargs)
        if mask is not None:
            m = loop.row(mask)
            new_states = map_structure(lambda n, o: _masked(n, o, m), new_states, states)
        arrays = loop.collect(out)
        loop.update(states, new_states)
    outputs = loop.stacked(arrays, n)
    if is_reverse:
        outputs = map_structure(lambda x: L.reverse(x, axis=[0]), outputs)
    if not time_major:
        outputs = map_structure(_swap_batch_time, outputs)
    return outputs, states


def _rnn_eager(
    cell: Any,
    inputs: Any,
    initial_states: Any,
    sequence_length: Any,
    time_major: bool,
    is_reverse: bool,
    **kwargs: Any,
) -> tuple:
    """Dygraph: a Python loop over the time steps."""
    L = _L()
    time_axis = 0 if time_major else 1
    per_leaf = [_unstack_time(x, time_axis) for x in flatten(inputs)]
    n_steps = len(per_leaf[0])
    if any(len(p) != n_steps for p in per_leaf):
        raise ArgumentTypeError("rnn", f"all inputs must have {n_steps} time steps")
    masks = None
    if sequence_length is not None:
        dtype = flatten(initial_states)[0].dtype
        mask = L.sequence_mask(sequence_length, maxlen=n_steps, dtype=dtype)
        masks = L.unstack(mask, axis=1, num=n_steps)
    order = range(n_steps - 1, -1, -1) if is_reverse else range(n_steps)
    states = initial_states
    outputs: list = []
    shared = SharedParameters("rnn")
    for k, t in enumerate(order):
        step_in = map_structure(lambda _, leaf, t=t: per_leaf[leaf][t], inputs, _leaf_ids(inputs))
        with shared.step(k):
            out, new_states = cell(step_in, states, **kwargs)
        if masks is not None:
            m = masks[t]
            new_states = map_structure(lambda n, o, m=m: _masked(n, o, m), new_states, states)
        states = new_states
        outputs.append(out)
    if is_reverse:
        outputs.reverse()
    final = map_structure(lambda *steps: L.stack(list(steps), axis=time_axis), *outputs)
    return final, states


def _leaf_ids(structure: Any) -> Any:
    from oar.layers._nest import pack_sequence_as

    return pack_sequence_as(structure, list(range(len(flatten(structure)))))


# ``paddle.fluid.layers.rnn`` is also a module path in Fluid 1.8 that gathers the recurrent
# layers; its other names resolve to fluid.layers' (or say why they are not provided)
_MODULE_NAMES = frozenset(
    {
        "BasicDecoder", "BeamSearchDecoder", "DecodeHelper", "Decoder", "GreedyEmbeddingHelper",
        "SampleEmbeddingHelper", "TrainingHelper", "beam_search", "beam_search_decode",
        "dynamic_decode", "dynamic_gru", "dynamic_lstm", "dynamic_lstmp", "gru_unit", "lstm",
        "lstm_unit",
    }
)  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _MODULE_NAMES:
        from oar.fluid import layers

        return getattr(layers, name)
    raise AttributeError(f"module 'oar.layers.rnn' has no attribute {name!r}")
