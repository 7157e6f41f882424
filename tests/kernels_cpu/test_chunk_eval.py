"""chunk_eval for IOB / IOE / IOBES / plain against Fluid 1.8.5 (random tags, golden data)
and a hand-counted NER example."""

import json
from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

GOLDEN = json.loads((Path(__file__).parent / "data/fluid18_chunk_eval.json").read_text())


def _scores(correct, infer, label):
    p, r = correct / infer, correct / label
    return p, r, 2 * p * r / (p + r)


# IOB, 2 chunk types: B-0=0 I-0=1 B-1=2 I-1=3 O=4
_LABEL = np.array(
    [[0], [1], [4], [2], [3], [3], [4], [0]], np.int64
)  # chunks (0-1,0) (3-5,1) (7,0)
_INFER = np.array([[0], [1], [4], [2], [3], [4], [4], [2]], np.int64)  # (0-1,0) (3-4,1) (7,1)
_P, _R, _F = _scores(1, 3, 3)
CASES = [
    OpCase(
        "chunk_eval",
        {"Inference": _INFER, "Label": _LABEL},
        {"num_chunk_types": 2, "chunk_scheme": "IOB"},
        ref=lambda **_: {
            "Precision": np.float32([_P]),
            "Recall": np.float32([_R]),
            "F1-Score": np.float32([_F]),
            "NumInferChunks": np.array([3]),
            "NumLabelChunks": np.array([3]),
            "NumCorrectChunks": np.array([1]),
        },
        lod={"inference_0": [[8]], "label_0": [[8]]},
    )
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_chunk_eval(case):
    check_case(case)


@pytest.mark.parametrize("golden", GOLDEN, ids=lambda c: f"{c['scheme']}-{c['excl']}")
def test_equals_fluid_1_8_5(golden):
    case = golden
    place = fluid.CPUPlace()
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 1], "int64", lod_level=1)
        y = fluid.data("y", [None, 1], "int64", lod_level=1)
        outs = fluid.layers.chunk_eval(x, y, case["scheme"], 3, excluded_chunk_types=case["excl"])
    lens = [[15, 5, 20]]
    feed = {
        "x": fluid.create_lod_tensor(np.array(case["x"], "int64").reshape(-1, 1), lens, place),
        "y": fluid.create_lod_tensor(np.array(case["y"], "int64").reshape(-1, 1), lens, place),
    }
    got = fluid.Executor(place).run(main, feed=feed, fetch_list=list(outs))
    np.testing.assert_allclose([float(np.ravel(v)[0]) for v in got], case["out"], rtol=1e-6)


def test_unknown_scheme_names_the_layer():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 1], "int64", lod_level=1)
        with pytest.raises(ValueError, match="chunk_eval: chunk_scheme must be one of"):
            fluid.layers.chunk_eval(x, x, "BIO", 2)
