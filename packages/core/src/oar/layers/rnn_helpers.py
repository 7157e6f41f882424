"""Fluid 1.8's decoding helpers and ``BasicDecoder``: ``DecodeHelper`` (the protocol),
``TrainingHelper`` (teacher forcing from given inputs), ``GreedyEmbeddingHelper`` (argmax
fed back through an embedding), ``SampleEmbeddingHelper`` (a sample of the softmax)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from oar.errors import ArgumentTypeError
from oar.layers._nest import map_structure
from oar.layers.rnn_decode import Decoder

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
        self.inputs, self.sequence_length, self.time_major = inputs, sequence_length, time_major
        # time-major, with one zero step past the end (the inputs after the last step are
        # never used, but the last step reads them)
        self._padded = map_structure(self._pad, inputs)

    def _pad(self, x: Any) -> Any:
        L = _L()
        if len(x.shape or ()) < 2:
            raise ArgumentTypeError(
                "TrainingHelper",
                f"inputs must be [batch, time, ...] (or [time, batch, ...]), given "
                f"{getattr(x, 'name', x)} of shape {list(x.shape or ())}",
            )
        if not self.time_major:
            x = L.transpose(x, [1, 0] + list(range(2, len(x.shape))))
        end = L.zeros_like(L.slice(x, axes=[0], starts=[0], ends=[1]))
        return L.concat([x, end], axis=0)

    def _at(self, t: Any) -> Any:
        L = _L()
        return map_structure(lambda x: L.squeeze(L.gather(x, t), [0]), self._padded)

    def initialize(self) -> tuple:
        L = _L()
        zero = L.fill_constant([1], "int64", 0)
        first = self._at(zero)
        return first, L.equal(self.sequence_length, L.cast(zero, self.sequence_length.dtype))

    def sample(self, time: Any, outputs: Any, states: Any) -> Any:
        return _L().argmax(outputs, axis=-1)

    def next_inputs(self, time: Any, outputs: Any, states: Any, sample_ids: Any) -> tuple:
        L = _L()
        nxt = L.increment(L.cast(time, "int64"), value=1.0, in_place=False)
        nxt.stop_gradient = True
        bound = L.cast(nxt, self.sequence_length.dtype)
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
