"""Fluid 1.8's decoding API: ``Decoder`` (the protocol), ``BeamSearchDecoder`` and
``dynamic_decode``.

``dynamic_decode`` runs ``decoder.step`` until every batch entry is finished or
``max_step_num`` + 1 steps have run. In dygraph it is a Python loop; in static graph a
``While`` loop whose body (the decoder's step, built once) runs until the same condition
fails, so the number of steps depends on the data. Entries that finish before the others
are padded as Fluid pads them (``end_token`` with unchanged scores for beam search, held
states with ``impute_finished``). The ``time`` a step receives is an int64 [1] tensor.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from oar.errors import ArgumentTypeError
from oar.framework.mode import current_builder
from oar.layers._loop import StepLoop
from oar.layers._nest import flatten, map_structure
from oar.layers._unroll import SharedParameters

__all__ = ["Decoder", "BeamSearchDecoder", "dynamic_decode"]


def _L():
    from oar import fluid

    return fluid.layers


class Decoder:
    """The protocol ``dynamic_decode`` drives: ``initialize(inits) -> (inputs, states,
    finished)``, ``step(time, inputs, states, **kwargs) -> (outputs, next_states,
    next_inputs, finished)`` and optionally ``finalize(outputs, final_states,
    sequence_lengths)``."""

    def initialize(self, inits: Any) -> tuple:
        raise NotImplementedError

    def step(self, time: Any, inputs: Any, states: Any, **kwargs: Any) -> tuple:
        raise NotImplementedError

    def finalize(self, outputs: Any, final_states: Any, sequence_lengths: Any) -> tuple:
        raise NotImplementedError

    @property
    def tracks_own_finished(self) -> bool:
        return False


class BeamSearchDecoder(Decoder):
    """Beam search over a cell: ``beam_size`` hypotheses per batch entry, scored by summed
    log-softmax of ``output_fn(cell outputs)``; finished hypotheses only extend with
    ``end_token`` at no cost. ``finalize`` back-traces the ids with ``gather_tree``."""

    OutputWrapper = namedtuple("OutputWrapper", ("scores", "predicted_ids", "parent_ids"))
    StateWrapper = namedtuple("StateWrapper", ("cell_states", "log_probs", "finished", "lengths"))
    kinf = 1e9

    def __init__(
        self,
        cell: Any,
        start_token: int,
        end_token: int,
        beam_size: int,
        embedding_fn: Any = None,
        output_fn: Any = None,
    ) -> None:
        if isinstance(beam_size, bool) or not isinstance(beam_size, int) or beam_size < 1:
            raise ArgumentTypeError(
                "BeamSearchDecoder", f"beam_size must be an int >= 1, given {beam_size!r}"
            )
        self.cell = cell
        self.start_token, self.end_token = int(start_token), int(end_token)
        self.beam_size = beam_size
        self.embedding_fn, self.output_fn = embedding_fn, output_fn

    # --- batch x beam reshapes ------------------------------------------------------------
    @staticmethod
    def tile_beam_merge_with_batch(x: Any, beam_size: int) -> Any:
        """[batch, ...] -> [batch * beam_size, ...], each entry repeated beam_size times."""
        L = _L()
        x = L.unsqueeze(x, [1])
        times = [1] * len(x.shape)
        times[1] = beam_size
        return L.reshape(L.expand(x, times), [-1] + list(x.shape[2:]))

    def _split_batch_beams(self, x: Any) -> Any:
        return _L().reshape(x, [-1, self.beam_size] + list(x.shape[1:]))

    def _merge_batch_beams(self, x: Any) -> Any:
        return _L().reshape(x, [-1] + list(x.shape[2:]))

    def _expand_to_beam_size(self, x: Any) -> Any:
        L = _L()
        x = L.unsqueeze(x, [1])
        times = [1] * len(x.shape)
        times[1] = self.beam_size
        return L.expand(x, times)

    def _gather(self, x: Any, indices: Any) -> Any:
        """x[b, indices[b, k]] for every batch entry b and beam k."""
        L = _L()
        ones = L.fill_constant_batch_size_like(indices, [-1, 1], indices.dtype, 1)
        batch_pos = L.expand(L.elementwise_sub(L.cumsum(ones, axis=0), ones), [1, self.beam_size])
        coords = L.stack([batch_pos, indices], axis=2)
        return L.gather_nd(x, coords)

    def _mask_probs(self, probs: Any, finished: Any) -> Any:
        """Finished beams: log-probability 0 for end_token, -kinf for every other word."""
        L = _L()
        f = L.cast(finished, probs.dtype)
        keep = L.elementwise_mul(probs, L.scale(f, scale=-1.0, bias=1.0), axis=0)
        vocab = int(probs.shape[-1])
        ended = L.expand(L.unsqueeze(f, [2]), [1, 1, vocab])
        return L.elementwise_add(keep, L.elementwise_mul(ended, self._noend_mask))

    # --- the Decoder protocol --------------------------------------------------------------
    def initialize(self, initial_cell_states: Any) -> tuple:
        L = _L()
        ref = flatten(initial_cell_states)[0]
        beam = self.beam_size
        cell_states = map_structure(self._expand_to_beam_size, initial_cell_states)
        start = L.fill_constant_batch_size_like(ref, [-1, beam], "int64", self.start_token)
        first = np.array([[0.0] + [-self.kinf] * (beam - 1)], "float32")
        log_probs = L.elementwise_add(
            L.fill_constant_batch_size_like(ref, [-1, beam], "float32", 0.0), L.assign(first)
        )
        finished = L.fill_constant_batch_size_like(ref, [-1, beam], "bool", 0)
        lengths = L.fill_constant_batch_size_like(ref, [-1, beam], "int64", 0)
        inputs = self.embedding_fn(start) if self.embedding_fn is not None else start
        state = self.StateWrapper(cell_states, log_probs, finished, lengths)
        return inputs, state, finished

    def _beam_search_step(self, time: Any, logits: Any, next_cell_states: Any, state: Any) -> tuple:
        L = _L()
        vocab = int(logits.shape[-1])
        noend = np.full([vocab], -self.kinf, "float32")
        noend[self.end_token] = 0.0
        self._noend_mask = L.assign(noend)
        step_log_probs = self._mask_probs(L.log(L.softmax(logits)), state.finished)
        log_probs = L.elementwise_add(step_log_probs, state.log_probs, axis=0)
        scores = L.reshape(log_probs, [-1, self.beam_size * vocab])
        topk_scores, topk_indices = L.topk(scores, k=self.beam_size)
        vocab_t = L.fill_constant([1], topk_indices.dtype, vocab)
        beam_indices = L.elementwise_floordiv(topk_indices, vocab_t)
        token_indices = L.elementwise_mod(topk_indices, vocab_t)
        next_cell_states = map_structure(lambda x: self._gather(x, beam_indices), next_cell_states)
        next_finished = self._gather(state.finished, beam_indices)
        next_lengths = self._gather(state.lengths, beam_indices)
        next_lengths = L.elementwise_add(
            next_lengths, L.cast(L.logical_not(next_finished), next_lengths.dtype)
        )
        end = L.fill_constant([1], token_indices.dtype, self.end_token)
        next_finished = L.logical_or(next_finished, L.equal(token_indices, end))
        out = self.OutputWrapper(topk_scores, token_indices, beam_indices)
        return out, self.StateWrapper(next_cell_states, topk_scores, next_finished, next_lengths)

    def step(self, time: Any, inputs: Any, states: Any, **kwargs: Any) -> tuple:
        inputs = map_structure(self._merge_batch_beams, inputs)
        cell_states = map_structure(self._merge_batch_beams, states.cell_states)
        cell_outputs, next_cell_states = self.cell(inputs, cell_states, **kwargs)
        cell_outputs = map_structure(self._split_batch_beams, cell_outputs)
        next_cell_states = map_structure(self._split_batch_beams, next_cell_states)
        if self.output_fn is not None:
            cell_outputs = self.output_fn(cell_outputs)
        out, state = self._beam_search_step(time, cell_outputs, next_cell_states, states)
        ids = out.predicted_ids
        next_inputs = self.embedding_fn(ids) if self.embedding_fn is not None else ids
        return out, state, next_inputs, state.finished

    def finalize(self, outputs: Any, final_states: Any, sequence_lengths: Any) -> tuple:
        predicted = _L().gather_tree(outputs.predicted_ids, outputs.parent_ids)
        return predicted, final_states

    @property
    def tracks_own_finished(self) -> bool:
        return True


def _hold(old: Any, new: Any, finished: Any) -> Any:
    """``old`` where ``finished``, else ``new`` (bool states through float32)."""
    L = _L()
    dtype = old.dtype
    if str(dtype).endswith("bool"):
        old, new = L.cast(old, "float32"), L.cast(new, "float32")
    mask = L.cast(finished, old.dtype)
    out = L.elementwise_add(new, L.elementwise_mul(L.elementwise_sub(old, new), mask, axis=0))
    return L.cast(out, dtype) if str(dtype).endswith("bool") else out


def dynamic_decode(
    decoder: Any,
    inits: Any = None,
    max_step_num: int | None = None,
    output_time_major: bool = False,
    impute_finished: bool = False,
    is_test: bool = False,
    return_length: bool = False,
    **kwargs: Any,
) -> tuple:
    """Decode with ``decoder`` from ``inits`` until all entries are finished (at most
    ``max_step_num`` + 1 steps). Returns ``(final_outputs, final_states)`` (and the
    sequence lengths with ``return_length``); outputs are batch-major unless
    ``output_time_major``."""
    if not isinstance(decoder, Decoder):
        raise ArgumentTypeError("dynamic_decode", f"decoder must be a Decoder, given {decoder!r}")
    run = _decode_eager if current_builder().eager else _decode_static
    final, states, lengths = run(decoder, inits, max_step_num, impute_finished, **kwargs)
    try:
        final, states = decoder.finalize(final, states, lengths)
    except NotImplementedError:
        pass
    if not output_time_major:
        final = map_structure(
            lambda x: _L().transpose(x, [1, 0] + list(range(2, len(x.shape)))), final
        )
    return (final, states, lengths) if return_length else (final, states)


def _decode_static(decoder: Any, inits: Any, max_step_num: Any, impute: bool, **kwargs: Any):
    """A While loop: runs while some entry is unfinished (and at most max_step_num + 1
    steps), so the number of steps depends on the data; step outputs go to tensor arrays."""
    L = _L()
    inputs0, states0, finished0 = decoder.initialize(inits)
    loop = StepLoop()
    inputs, states, finished = loop.carry((inputs0, states0, finished0))
    lengths = loop.carry(L.cast(L.zeros_like(L.cast(finished0, "int64")), "int64"))
    limit = None if max_step_num is None else L.fill_constant([1], "int64", int(max_step_num))

    def going(i: Any) -> Any:
        more = L.logical_not(L.reduce_all(finished))
        return more if limit is None else L.logical_and(more, L.less_equal(i, limit))

    with loop.body(going(loop.i), going):
        outputs, next_states, next_inputs, next_finished = decoder.step(
            loop.i, inputs, states, **kwargs
        )
        if not decoder.tracks_own_finished:
            next_finished = L.logical_or(next_finished, finished)
            next_lengths = L.elementwise_add(lengths, L.cast(L.logical_not(finished), "int64"))
            if impute:
                next_states = map_structure(lambda o, n: _hold(o, n, finished), states, next_states)
        else:
            next_lengths = getattr(next_states, "lengths", lengths)
        arrays = loop.collect(outputs)
        loop.update((inputs, states, finished, lengths),
                    (next_inputs, next_states, next_finished, next_lengths))  # fmt: skip
    return loop.stacked(arrays), states, lengths


def _decode_eager(decoder: Any, inits: Any, max_step_num: Any, impute: bool, **kwargs: Any):
    """Dygraph: a Python loop that stops as soon as every entry is finished."""
    L = _L()
    limit = None if max_step_num is None else int(max_step_num) + 1
    shared = SharedParameters("dynamic_decode")
    inputs, states, finished = decoder.initialize(inits)
    lengths = L.cast(L.zeros_like(L.cast(finished, "int64")), "int64")
    step_outputs: list = []
    t = 0
    while (limit is None or t < limit) and not bool(np.all(finished.numpy())):
        time = L.fill_constant([1], "int64", t)
        with shared.step(t):
            outputs, next_states, next_inputs, next_finished = decoder.step(
                time, inputs, states, **kwargs
            )
        if not decoder.tracks_own_finished:
            next_finished = L.logical_or(next_finished, finished)
            lengths = L.elementwise_add(lengths, L.cast(L.logical_not(finished), "int64"))
            if impute:
                done = finished
                next_states = map_structure(
                    lambda o, n, d=done: _hold(o, n, d), states, next_states
                )
        else:
            lengths = getattr(next_states, "lengths", lengths)
        step_outputs.append(outputs)
        inputs, states, finished = next_inputs, next_states, next_finished
        t += 1
    if not step_outputs:
        raise ArgumentTypeError("dynamic_decode", "every entry was finished before the first step")
    final = map_structure(lambda *xs: L.stack(list(xs), axis=0), *step_outputs)
    return final, states, lengths
