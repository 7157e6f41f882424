"""The 1.8 cell API (rnn, LSTMCell, GRUCell, decoders, helpers) and contrib basic_lstm /
basic_gru against the numbers Fluid 1.8.5 gives (golden data: data/fluid18_rnn_cells.py)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location("fluid18_rnn_cells", DATA / "fluid18_rnn_cells.py")
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)
GOLDEN = np.load(DATA / "fluid18_rnn_cells.npz")
# Fluid 1.8.5's static BeamSearchDecoder returns lengths that do not belong to the final
# beams (e.g. 2 for a beam that emitted end_id at step 0 and 1 for one that never did);
# oar's are the lengths of the beams it returns (test_beam_lengths_count_up_to_end below)
DIFFERS = {("beam", 2)}


@pytest.mark.parametrize("name", GEN.CONFIGS)
def test_static_graph_equals_fluid_1_8_5(name):
    got = GEN.run(fluid, name)
    want = [
        GOLDEN[f"{name}_{i}"]
        for i in range(
            sum(k.startswith(name + "_") and k[len(name) + 1 :].isdigit() for k in GOLDEN.files)
        )
    ]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        if (name, i) in DIFFERS:
            continue
        assert g.shape == w.shape, f"{name} fetch {i}: shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5, err_msg=f"{name} fetch {i}")


def test_beam_lengths_count_up_to_end():
    ids, _, lengths = GEN.run(fluid, "beam")
    # ids [batch, time, beam]: a beam's length is its steps up to and including its first end
    is_end = ids == 1
    first_end = np.where(is_end.any(axis=1), is_end.argmax(axis=1) + 1, ids.shape[1])
    np.testing.assert_array_equal(lengths, first_end)
