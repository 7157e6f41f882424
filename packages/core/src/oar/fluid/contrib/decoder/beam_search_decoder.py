"""The pre-1.6 decoder API of Fluid's contrib, over DynamicRNN (training) and While plus
tensor arrays (beam search).

A :class:`StateCell` names its inputs and its states (each started by an
:class:`InitState`) and holds a user ``state_updater`` that computes new states from
``get_input`` / ``get_state`` with ``set_state``. A decoder lends the cell its state
storage while its ``block()`` is open: the DynamicRNN's memories for
:class:`TrainingDecoder`, one tensor array per state (indexed by the step counter) for
:class:`BeamSearchDecoder`. ``update_states()`` commits the values set in this step.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from oar.errors import ArgumentError

__all__ = ["InitState", "StateCell", "TrainingDecoder", "BeamSearchDecoder"]


class InitState:
    """A state's start: the variable ``init``, or a ``shape`` filled with ``value`` for each
    row of ``init_boot`` (its batch size). ``need_reorder``: the training decoder reorders it
    with the sequences (by length), as the DynamicRNN's memories."""

    def __init__(
        self,
        init: Any = None,
        shape: Any = None,
        value: float = 0.0,
        init_boot: Any = None,
        need_reorder: bool = False,
        dtype: str = "float32",
    ) -> None:
        from oar import layers

        if init is not None:
            self._init = init
        elif init_boot is None:
            raise ArgumentError(
                "InitState", "give init, or init_boot (whose batch size sizes the state)"
            )
        else:
            self._init = layers.fill_constant_batch_size_like(
                input=init_boot, value=value, shape=shape, dtype=dtype
            )
        self._shape, self._value = shape, value
        self._need_reorder = bool(need_reorder)
        self._dtype = dtype

    @property
    def value(self) -> Any:
        return self._init

    @property
    def need_reorder(self) -> bool:
        return self._need_reorder


class StateCell:
    """Inputs (``{name: None or variable}``), states (``{name: InitState}``), the state
    ``out_state`` that is the cell's output, and the updater set with ``state_updater``."""

    def __init__(self, inputs: dict, states: dict, out_state: str, name: str | None = None) -> None:
        if not isinstance(inputs, dict) or not isinstance(states, dict):
            raise ArgumentError("StateCell", "inputs and states must be dicts keyed by name")
        for key, init in states.items():
            if not isinstance(init, InitState):
                raise ArgumentError(
                    "StateCell", f"state {key!r} must start from an InitState, given {init!r}"
                )
        if out_state not in states:
            raise ArgumentError(
                "StateCell", f"out_state {out_state!r} is not one of the states {sorted(states)}"
            )
        self._inputs = dict(inputs)
        self._init_states = dict(states)
        self._state_names = list(states)
        self._out_state = out_state
        self._name = name
        self._updater: Callable | None = None
        self._decoder: Any = None
        self._cur: dict = {}

    # --- used by the decoders -----------------------------------------------------------
    def _enter_decoder(self, decoder: Any) -> None:
        if self._decoder is not None:
            raise ArgumentError("StateCell", "the cell is already in another decoder's block")
        self._decoder = decoder
        self._cur = {}

    def _leave_decoder(self, decoder: Any) -> None:
        if self._decoder is not decoder:
            raise ArgumentError("StateCell", "leaving a decoder the cell is not in")
        self._decoder = None
        self._cur = {}

    def _in_decoder(self, what: str) -> Any:
        if self._decoder is None:
            raise ArgumentError("StateCell", f"{what} must be called inside a decoder's block()")
        return self._decoder

    # --- the user's API -------------------------------------------------------------------
    def state_updater(self, updater: Callable) -> Callable:
        """Decorator: ``updater(state_cell)`` computes the new states of one step."""
        self._updater = updater
        return updater

    def get_input(self, input_name: str) -> Any:
        if input_name not in self._inputs or self._inputs[input_name] is None:
            raise ArgumentError(
                "StateCell", f"input {input_name!r} has no value (inputs: {sorted(self._inputs)})"
            )
        return self._inputs[input_name]

    def get_state(self, state_name: str) -> Any:
        decoder = self._in_decoder("get_state")
        if state_name not in self._init_states:
            raise ArgumentError(
                "StateCell", f"unknown state {state_name!r} (states: {self._state_names})"
            )
        if state_name not in self._cur:
            self._cur[state_name] = decoder._read_state(state_name, self._init_states[state_name])
        return self._cur[state_name]

    def set_state(self, state_name: str, state_value: Any) -> None:
        self._in_decoder("set_state")
        if state_name not in self._init_states:
            raise ArgumentError(
                "StateCell", f"unknown state {state_name!r} (states: {self._state_names})"
            )
        self._cur[state_name] = state_value

    def compute_state(self, inputs: dict) -> None:
        """Set the step's inputs (names given to the constructor) and run the updater."""
        self._in_decoder("compute_state")
        for key, value in inputs.items():
            if key not in self._inputs:
                raise ArgumentError(
                    "StateCell", f"unknown input {key!r} (inputs: {sorted(self._inputs)})"
                )
            self._inputs[key] = value
        if self._updater is None:
            raise ArgumentError(
                "StateCell", "no state_updater: decorate one with @cell.state_updater"
            )
        self._updater(self)

    def update_states(self) -> None:
        """Commit the states set in this step as the next step's."""
        decoder = self._in_decoder("update_states")
        for name in self._state_names:
            decoder._write_state(name, self.get_state(name))

    def out_state(self) -> Any:
        return self.get_state(self._out_state)


class TrainingDecoder:
    """Teacher-forced decoding over a DynamicRNN: inside ``block()``, ``step_input`` the
    target words, ``compute_state`` / ``update_states`` the cell and ``output`` the step's
    results; calling the decoder gives the outputs as LoD sequences."""

    BEFORE_DECODER, IN_DECODER, AFTER_DECODER = 0, 1, 2

    def __init__(self, state_cell: StateCell, name: str | None = None) -> None:
        from oar import layers

        self._state_cell = state_cell
        self._dynamic_rnn = layers.DynamicRNN(name=name)
        self._memories: dict = {}
        self._status = TrainingDecoder.BEFORE_DECODER

    @property
    def state_cell(self) -> StateCell:
        return self._state_cell

    @property
    def dynamic_rnn(self) -> Any:
        return self._dynamic_rnn

    @contextlib.contextmanager
    def block(self) -> Iterator[None]:
        if self._status != TrainingDecoder.BEFORE_DECODER:
            raise ArgumentError("TrainingDecoder", "block() can be entered only once")
        self._status = TrainingDecoder.IN_DECODER
        with self._dynamic_rnn.block():
            self._state_cell._enter_decoder(self)
            yield
            self._state_cell._leave_decoder(self)
        self._status = TrainingDecoder.AFTER_DECODER

    def _inside(self, what: str) -> None:
        if self._status != TrainingDecoder.IN_DECODER:
            raise ArgumentError("TrainingDecoder", f"{what} must be called inside block()")

    def _read_state(self, name: str, init: InitState) -> Any:
        if name not in self._memories:
            self._memories[name] = self._dynamic_rnn.memory(
                init=init.value, need_reorder=init.need_reorder
            )
        return self._memories[name]

    def _write_state(self, name: str, value: Any) -> None:
        mem = self._read_state(name, self._state_cell._init_states[name])
        if value is not mem:
            self._dynamic_rnn.update_memory(mem, value)

    def step_input(self, x: Any) -> Any:
        self._inside("step_input")
        return self._dynamic_rnn.step_input(x)

    def static_input(self, x: Any) -> Any:
        self._inside("static_input")
        return self._dynamic_rnn.static_input(x)

    def output(self, *outputs: Any) -> None:
        self._inside("output")
        self._dynamic_rnn.output(*outputs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._status != TrainingDecoder.AFTER_DECODER:
            raise ArgumentError("TrainingDecoder", "call the decoder after its block()")
        return self._dynamic_rnn(*args, **kwargs)


class BeamSearchDecoder:
    """Beam search over a While loop of at most ``max_len`` steps: each step embeds the
    previous ids (``word_dim``), runs the cell on them (and on ``input_var_dict``'s
    inputs), scores ``target_dict_dim`` words with a softmax fc, keeps the ``topk_size``
    best per hypothesis and ``beam_search`` selects ``beam_size`` per source (``end_id``
    ends one). ``decode()`` builds that loop; calling the decoder gives
    ``beam_search_decode``'s (ids, scores). ``block()``, ``read_array``, ``update_array``
    and ``early_stop`` build a custom loop."""

    BEFORE_BEAM_SEARCH_DECODER, IN_BEAM_SEARCH_DECODER, AFTER_BEAM_SEARCH_DECODER = 0, 1, 2

    def __init__(
        self,
        state_cell: StateCell,
        init_ids: Any,
        init_scores: Any,
        target_dict_dim: int,
        word_dim: int,
        input_var_dict: dict = {},  # noqa: B006 (Fluid 1.8's signature)
        topk_size: int = 50,
        sparse_emb: bool = True,
        max_len: int = 100,
        beam_size: int = 1,
        end_id: int = 1,
        name: str | None = None,
    ) -> None:
        from oar import layers

        for arg, v in (("target_dict_dim", target_dict_dim), ("word_dim", word_dim),
                       ("topk_size", topk_size), ("max_len", max_len), ("beam_size", beam_size)):  # fmt: skip
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ArgumentError(
                    "BeamSearchDecoder", f"{arg} must be a positive int, given {v!r}"
                )
        self._state_cell = state_cell
        self._init_ids, self._init_scores = init_ids, init_scores
        self._target_dict_dim, self._word_dim = target_dict_dim, word_dim
        self._input_var_dict = dict(input_var_dict)
        self._topk_size, self._sparse_emb = topk_size, sparse_emb
        self._max_len, self._beam_size, self._end_id = max_len, beam_size, end_id
        self._name = name
        self._counter = layers.zeros([1], "int64", force_cpu=True)
        self._max_len_var = layers.fill_constant([1], "int64", max_len)
        self._cond = layers.less_than(self._counter, self._max_len_var)
        self._while = layers.While(self._cond)
        self._status = BeamSearchDecoder.BEFORE_BEAM_SEARCH_DECODER
        self._state_arrays: dict = {}
        for key, init in state_cell._init_states.items():  # step 0's states, before the loop
            self._state_arrays[key] = layers.create_array(init.value.dtype)
            layers.array_write(init.value, self._counter, self._state_arrays[key])
        self._array_of: dict = {}  # name of a variable read_array gave -> its array
        self._ids_array: Any = None
        self._scores_array: Any = None
        self._next: Any = None

    @property
    def state_cell(self) -> StateCell:
        return self._state_cell

    @contextlib.contextmanager
    def block(self) -> Iterator[None]:
        """The loop body: runs while the step counter is below ``max_len`` and no
        ``early_stop`` ran."""
        from oar import layers

        if self._status != BeamSearchDecoder.BEFORE_BEAM_SEARCH_DECODER:
            raise ArgumentError("BeamSearchDecoder", "block() can be entered only once")
        self._status = BeamSearchDecoder.IN_BEAM_SEARCH_DECODER
        with self._while.block():
            self._state_cell._enter_decoder(self)
            self._next = layers.increment(self._counter, value=1, in_place=False)
            yield
            layers.increment(self._counter, value=1, in_place=True)
            below = layers.less_than(self._counter, self._max_len_var)
            layers.logical_and(below, self._cond, out=self._cond)
            self._state_cell._leave_decoder(self)
        self._status = BeamSearchDecoder.AFTER_BEAM_SEARCH_DECODER

    def _inside(self, what: str) -> None:
        if self._status != BeamSearchDecoder.IN_BEAM_SEARCH_DECODER:
            raise ArgumentError("BeamSearchDecoder", f"{what} must be called inside block()")

    def _read_state(self, name: str, init: InitState) -> Any:
        from oar import layers

        return layers.array_read(self._state_arrays[name], self._counter)

    def _write_state(self, name: str, value: Any) -> None:
        from oar import layers

        layers.array_write(value, self._next, self._state_arrays[name])

    def early_stop(self) -> None:
        """End the loop after this step."""
        from oar import layers

        self._inside("early_stop")
        layers.fill_constant([1], "bool", False, out=self._cond)

    def read_array(self, init: Any, is_ids: bool = False, is_scores: bool = False) -> Any:
        """A tensor array started (before the loop) with ``init``; returns this step's
        element. ``is_ids`` / ``is_scores``: the arrays ``beam_search_decode`` reads."""
        from oar import layers
        from oar.layers.control_flow import in_parent_block

        self._inside("read_array")
        if is_ids and is_scores:
            raise ArgumentError("BeamSearchDecoder", "an array holds ids or scores, not both")
        program = self._counter.block.program
        with in_parent_block(program):
            array = layers.create_array(init.dtype)
            layers.array_write(init, self._counter, array)
        if is_ids:
            self._ids_array = array
        if is_scores:
            self._scores_array = array
        value = layers.array_read(array, self._counter)
        self._array_of[value.name] = array
        return value

    def update_array(self, array: Any, value: Any) -> None:
        """Write the next step's element of the array ``array`` (a variable ``read_array``
        returned) as ``value``."""
        from oar import layers

        self._inside("update_array")
        target = self._array_of.get(getattr(array, "name", None))
        if target is None:
            raise ArgumentError(
                "BeamSearchDecoder", "update_array takes a variable that read_array returned"
            )
        layers.array_write(value, self._next, target)

    def decode(self) -> None:
        """Build the standard beam-search loop (see the class)."""
        with self.block():
            self._decode_step()

    def _expanded_inputs(self, prev_scores: Any) -> tuple:
        from oar import layers

        cell = self._state_cell
        feed, update = {}, {}
        for key, var in self._input_var_dict.items():
            if key not in cell._inputs:
                raise ArgumentError(
                    "BeamSearchDecoder",
                    f"input_var_dict names {key!r}, which is not an input of the state cell",
                )
            read = self.read_array(init=var)
            update[key] = read
            feed[key] = layers.sequence_expand(read, prev_scores)
        for key in cell._state_names:
            cell.set_state(key, layers.sequence_expand(cell.get_state(key), prev_scores))
        return feed, update

    def _decode_step(self) -> None:
        from oar import layers

        cell = self._state_cell
        prev_ids = self.read_array(init=self._init_ids, is_ids=True)
        prev_scores = self.read_array(init=self._init_scores, is_scores=True)
        prev_emb = layers.embedding(
            prev_ids, size=[self._target_dict_dim, self._word_dim], is_sparse=self._sparse_emb
        )
        feed, update = self._expanded_inputs(prev_scores)
        for key in cell._inputs:
            feed.setdefault(key, prev_emb)
        cell.compute_state(inputs=feed)
        state = layers.lod_reset(cell.out_state(), y=prev_scores)
        probs = layers.fc(state, size=self._target_dict_dim, act="softmax")
        top_scores, top_ids = layers.topk(probs, k=self._topk_size)
        accumulated = layers.elementwise_add(
            layers.log(top_scores), layers.reshape(prev_scores, [-1]), axis=0
        )
        ids, scores = layers.beam_search(
            prev_ids, prev_scores, top_ids, accumulated, self._beam_size,
            end_id=self._end_id, level=0,
        )  # fmt: skip
        with layers.Switch() as switch:
            with switch.case(layers.is_empty(ids)):
                self.early_stop()
            with switch.default():
                cell.update_states()
                self.update_array(prev_ids, ids)
                self.update_array(prev_scores, scores)
                for key, read in update.items():
                    self.update_array(read, feed[key])

    def __call__(self) -> tuple:
        """(sentence ids, sentence scores) of the beams, by ``beam_search_decode``."""
        from oar import layers

        if self._status != BeamSearchDecoder.AFTER_BEAM_SEARCH_DECODER:
            raise ArgumentError("BeamSearchDecoder", "call the decoder after its block()")
        if self._ids_array is None or self._scores_array is None:
            raise ArgumentError(
                "BeamSearchDecoder",
                "no ids/scores arrays: read_array(..., is_ids=True) and "
                "read_array(..., is_scores=True) inside block() (decode() does)",
            )
        return layers.beam_search_decode(
            ids=self._ids_array, scores=self._scores_array,
            beam_size=self._beam_size, end_id=self._end_id,
        )  # fmt: skip
