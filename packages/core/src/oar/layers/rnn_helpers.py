"""Fluid 1.8's decoding helpers and ``BasicDecoder``: ``DecodeHelper`` (the protocol),
``TrainingHelper`` (teacher forcing from given inputs), ``GreedyEmbeddingHelper`` (argmax
fed back through an embedding), ``SampleEmbeddingHelper`` (a sample of the softmax)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from oar.errors import ArgumentTypeError
from oar.layers._nest import flatten
from oar.layers.rnn_decode import Decoder, step_of

__all__ = [
    "DecodeHelper",
    "TrainingHelper",
    "GreedyEmbeddingHelper",
    "SampleEmbeddingHelper",
    "BasicDecoder",
]


def _L():
    from oar import fluid

    return fluid.layers


class DecodeHelper:
    """How ``BasicDecoder`` starts, picks ids and feeds the next step: ``initialize() ->
    (initial_inputs, initial_finished)``, ``sample(time, outputs, states) -> sample_ids``,
    ``next_inputs(time, outputs, states, sample_ids) -> (finished, next_inputs,
    next_states)``."""

    def initialize(self) -> tuple:
        raise NotImplementedError

    def sample(self, time: Any, outputs: Any, states: Any) -> Any:
        raise NotImplementedError

    def next_inputs(self, time: Any, outputs: Any, states: Any, sample_ids: Any) -> tuple:
        raise NotImplementedError


class TrainingHelper(DecodeHelper):
    """Teacher forcing: step t reads ``inputs`` at time t; an entry is finished once its
    ``sequence_length`` is reached. Samples are the argmax of the outputs."""

    def __init__(self, inputs: Any, sequence_length: Any, time_major: bool = False) -> None:
        L = _L()
        self.inputs, self.sequence_length, self.time_major = inputs, sequence_length, time_major
        axis = 0 if time_major else 1
        leaves = flatten(inputs)
        steps = int(leaves[0].shape[axis])
        if steps < 0:
            raise ArgumentTypeError(
                "TrainingHelper",
                f"the time dimension of inputs must be known, given shape {list(leaves[0].shape)}",
            )
        self.max_steps = steps
        per_leaf = [L.unstack(x, axis=axis, num=steps) for x in leaves]
        # one zero step past the end: the inputs after the last step are never used
        self._steps = [[p[t] for p in per_leaf] for t in range(steps)]
        self._steps.append([L.zeros_like(p[-1]) for p in per_leaf])

    def _at(self, t: int) -> Any:
        from oar.layers._nest import pack_sequence_as

        return pack_sequence_as(self.inputs, self._steps[min(t, self.max_steps)])

    def initialize(self) -> tuple:
        L = _L()
        zero = L.fill_constant([1], self.sequence_length.dtype, 0)
        return self._at(0), L.equal(self.sequence_length, zero)

    def sample(self, time: Any, outputs: Any, states: Any) -> Any:
        return _L().argmax(outputs, axis=-1)

    def next_inputs(self, time: Any, outputs: Any, states: Any, sample_ids: Any) -> tuple:
        L = _L()
        nxt = step_of(time) + 1
        bound = L.fill_constant([1], self.sequence_length.dtype, nxt)
        finished = L.less_equal(self.sequence_length, bound)
        return finished, self._at(nxt), states


class GreedyEmbeddingHelper(DecodeHelper):
    """Greedy decoding: the argmax id of each step, embedded by ``embedding_fn``, is the next
    input; an entry finishes when it emits ``end_token``."""

    def __init__(self, embedding_fn: Any, start_tokens: Any, end_token: int) -> None:
        self.embedding_fn = embedding_fn
        self.start_tokens = start_tokens
        self.end_token = int(end_token)

    def initialize(self) -> tuple:
        L = _L()
        finished = L.fill_constant_batch_size_like(self.start_tokens, [-1], "bool", 0)
        return self.embedding_fn(self.start_tokens), finished

    def sample(self, time: Any, outputs: Any, states: Any) -> Any:
        return _L().argmax(outputs, axis=-1)

    def next_inputs(self, time: Any, outputs: Any, states: Any, sample_ids: Any) -> tuple:
        L = _L()
        end = L.fill_constant([1], sample_ids.dtype, self.end_token)
        return L.equal(sample_ids, end), self.embedding_fn(sample_ids), states


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """Like GreedyEmbeddingHelper, but the id is sampled from ``softmax(outputs /
    softmax_temperature)``."""

    def __init__(
        self,
        embedding_fn: Any,
        start_tokens: Any,
        end_token: int,
        softmax_temperature: float | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(embedding_fn, start_tokens, end_token)
        self.softmax_temperature = softmax_temperature
        self.seed = seed

    def sample(self, time: Any, outputs: Any, states: Any) -> Any:
        L = _L()
        logits = outputs
        if self.softmax_temperature is not None:
            logits = L.scale(logits, scale=1.0 / float(self.softmax_temperature))
        probs = L.softmax(logits)
        ids = L.sampling_id(probs, seed=self.seed or 0, dtype="int64")
        return L.cast(ids, "int64")


class BasicDecoder(Decoder):
    """A cell plus a helper: each step runs the cell, maps its outputs with ``output_fn``,
    lets the helper pick ids and the next inputs. Outputs are
    ``OutputWrapper(cell_outputs, sample_ids)``."""

    OutputWrapper = namedtuple("OutputWrapper", ("cell_outputs", "sample_ids"))

    def __init__(self, cell: Any, helper: Any, output_fn: Any = None) -> None:
        if not isinstance(helper, DecodeHelper):
            raise ArgumentTypeError(
                "BasicDecoder", f"helper must be a DecodeHelper, given {helper!r}"
            )
        self.cell, self.helper, self.output_fn = cell, helper, output_fn

    def initialize(self, initial_cell_states: Any) -> tuple:
        inputs, finished = self.helper.initialize()
        return inputs, initial_cell_states, finished

    def step(self, time: Any, inputs: Any, states: Any, **kwargs: Any) -> tuple:
        cell_outputs, cell_states = self.cell(inputs, states, **kwargs)
        if self.output_fn is not None:
            cell_outputs = self.output_fn(cell_outputs)
        sample_ids = self.helper.sample(time, cell_outputs, cell_states)
        sample_ids.stop_gradient = True
        finished, next_inputs, next_states = self.helper.next_inputs(
            time, cell_outputs, cell_states, sample_ids
        )
        return self.OutputWrapper(cell_outputs, sample_ids), next_states, next_inputs, finished
