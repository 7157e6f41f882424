"""``fluid.contrib.decoder``: the pre-1.6 decoder API (``InitState``, ``StateCell``,
``TrainingDecoder``, ``BeamSearchDecoder``), superseded by ``fluid.layers.rnn`` /
``dynamic_decode`` but still used by 1.x programs."""

from oar.fluid.contrib.decoder import beam_search_decoder
from oar.fluid.contrib.decoder.beam_search_decoder import (
    BeamSearchDecoder,
    InitState,
    StateCell,
    TrainingDecoder,
)

__all__ = ["InitState", "StateCell", "TrainingDecoder", "BeamSearchDecoder", "beam_search_decoder"]
