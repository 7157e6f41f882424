"""hash: the numbers of Fluid 1.8.5's hash op (golden data in data/), the pure-Python XXH64
against the xxhash package, the layer and its bad input."""

import json
from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

DATA = Path(__file__).parent / "data"
GOLDEN = json.loads((DATA / "fluid18_hash.json").read_text())
X = [[1, 2], [3, 4], [5, 6], [-7, 2**30], [0, 0]]


def _case(dtype):
    want = np.array(GOLDEN[dtype]["out"], np.int64)
    return OpCase(
        "hash",
        {"X": np.array(X, dtype)},
        {"num_hash": 3, "mod_by": 1000},
        ref=lambda **_: {"Out": want},
        lod={"x_0": [[2, 3]]},
        name=dtype,
    )


CASES = [_case("int32"), _case("int64")]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_hash_equals_fluid_1_8_5(case):
    check_case(case)


def test_pure_python_xxh64_equals_the_package():
    xxhash = pytest.importorskip("xxhash")
    from oar_kernels_cpu.kernels.hash import xxh64

    gen = np.random.default_rng(2)
    for n in (0, 1, 3, 4, 7, 8, 15, 31, 32, 33, 64, 100):
        data = gen.integers(0, 256, n).astype(np.uint8).tobytes()
        for seed in (0, 1, 5):
            assert xxh64(data, seed) == xxhash.xxh64_intdigest(data, seed), (n, seed)


def test_layer_keeps_lod_and_shape():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.data("x", [None, 2], "int64", lod_level=1)
        out = fluid.layers.hash(x, hash_size=1000, num_hash=3)
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {"x": fluid.create_lod_tensor(np.array(X, "int64"), [[2, 3]], fluid.CPUPlace())}
    (r,) = exe.run(main, feed=feed, fetch_list=[out], return_numpy=False)
    assert r.lod() == GOLDEN["int64"]["lod"]
    np.testing.assert_array_equal(np.array(r), GOLDEN["int64"]["out"])


def test_bad_hash_size_names_the_layer():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 1], "int64")
        with pytest.raises(ValueError, match="hash: hash_size must be a positive int"):
            fluid.layers.hash(x, hash_size=0)
