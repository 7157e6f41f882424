"""Bad sequence input: a LoD that does not match the tensor's rows, a sequence op fed a tensor
without LoD. Each error names the layer (op), the variable, what was expected and what was
given, and the user's line (this file)."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.errors import FeedError, OpRuntimeError, ShapeError

L = fluid.layers
THIS = "test_bad_input_sequences.py"
X = np.ones((6, 2), "float32")


def _words(lod_level=1):
    return fluid.data("words", [None, 2], "float32", lod_level=lod_level)


def _lod(lengths):
    t = fluid.LoDTensor()
    t.set(X, fluid.CPUPlace())
    t.set_recursive_sequence_lengths(lengths)
    return t


CASES = [
    (
        "feed-lod-past-the-rows",
        lambda: L.sequence_pool(_words(), "sum"),
        lambda: {"words": _lod([[4, 4]])},
        FeedError,
        ["Executor.run", "'words'", "[[4, 4]]", "6 rows"],
    ),
    (
        "feed-two-levels-that-disagree",
        lambda: L.sequence_pool(_words(2), "sum"),
        lambda: {"words": _lod([[1, 2], [2, 4]])},
        FeedError,
        ["Executor.run", "'words'", "[[1, 2], [2, 4]]", "number of sequences"],
    ),
    (
        "lod_reset-past-the-rows",
        lambda: L.sequence_pool(L.lod_reset(_words(0), target_lod=[0, 4, 5]), "sum"),
        lambda: {"words": X},
        ShapeError,
        ["lod_reset", "'words'", "ends at 5", "rows: 6"],
    ),
    (
        "sequence_pool-without-lod",
        lambda: L.sequence_pool(_words(0), "sum"),
        lambda: {"words": X},
        ShapeError,
        ["sequence_pool", "input X ('words')", "LoDTensor with LoD", "without LoD", "[6, 2]"],
    ),
    (
        "sequence_pool-fed-a-plain-array",
        lambda: L.sequence_pool(_words(1), "max"),
        lambda: {"words": X},
        ShapeError,
        ["sequence_pool", "input X ('words')", "without LoD"],
    ),
    (
        "sequence_softmax-without-lod",
        lambda: L.sequence_softmax(fluid.data("scores", [None, 1], "float32")),
        lambda: {"scores": np.ones((6, 1), "float32")},
        ShapeError,
        ["sequence_softmax", "input X ('scores')", "without LoD", "[6, 1]"],
    ),
    (
        "sequence_expand-y-without-lod",
        lambda: L.sequence_expand(_words(0), fluid.data("ref", [None, 2], "float32")),
        lambda: {"words": X, "ref": X},
        ShapeError,
        ["sequence_expand", "input Y ('ref')", "without LoD"],
    ),
]


@pytest.mark.parametrize("cid,build,feed,exc_type,words", CASES, ids=[c[0] for c in CASES])
def test_bad_sequence_input(cid, build, feed, exc_type, words):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        out = build()
    exe = fluid.Executor(fluid.CPUPlace())
    with pytest.raises((exc_type, OpRuntimeError)) as info:
        exe.run(main, feed=feed(), fetch_list=[out])
    assert isinstance(info.value, exc_type), info.value
    msg = str(info.value)
    body = msg.split("\n  called at ")[0].split("\n  created at ")[0]
    for w in words:
        assert w in body, (w, msg)
    assert THIS in msg, msg
