"""Tensor-creating ops: deterministic fills exactly; random fills by shape, dtype, range,
statistics and seed determinism."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case, run_forward


def _fill_ref(shape, dtype="float32", value=0.0, str_value="", ShapeTensor=None, **_):
    if ShapeTensor is not None:
        shape = list(ShapeTensor)
    return {"Out": np.full(shape, float(str_value) if str_value else value, dtype=dtype)}


def _batch_like_ref(
    Input, shape, dtype="float32", value=0.0, input_dim_idx=0, output_dim_idx=0, **_
):
    shape = list(shape)
    shape[output_dim_idx] = Input.shape[input_dim_idx]
    return {"Out": np.full(shape, value, dtype=dtype)}


CASES = [
    OpCase(
        "fill_constant",
        {},
        {"shape": [2, 3], "dtype": "float32", "value": 1.5},
        ref=_fill_ref,
        name="float32",
    ),
    OpCase(
        "fill_constant",
        {},
        {"shape": [5], "dtype": "int64", "value": 1.0},
        ref=_fill_ref,
        name="int64",
    ),
    OpCase(
        "fill_constant",
        {},
        {"shape": [2], "dtype": "float64", "str_value": "0.1"},
        ref=_fill_ref,
        name="str-value",
    ),
    OpCase(
        "fill_constant",
        {"ShapeTensor": np.array([3, 2], "int64")},
        {"shape": [], "value": 7.0},
        ref=_fill_ref,
        name="shape-tensor",
    ),
    OpCase(
        "fill_constant_batch_size_like",
        {"Input": np.zeros((4, 3), "float32")},
        {"shape": [-1, 5], "value": 2.0},
        ref=_batch_like_ref,
        name="dim0",
    ),
    OpCase(
        "fill_constant_batch_size_like",
        {"Input": np.zeros((4, 3), "float32")},
        {
            "shape": [2, -1],
            "value": -1.0,
            "dtype": "int32",
            "input_dim_idx": 1,
            "output_dim_idx": 1,
        },
        ref=_batch_like_ref,
        name="dim1-int32",
    ),
    OpCase(
        "fill_zeros_like",
        {"X": np.ones((2, 3), "float64")},
        ref=lambda X: {"Out": np.zeros_like(X)},
    ),
    OpCase(
        "fill_any_like",
        {"X": np.ones((2, 2), "float32")},
        {"value": 3.0},
        ref=lambda X, value, **_: {"Out": np.full_like(X, value)},
        name="same-dtype",
    ),
    OpCase(
        "fill_any_like",
        {"X": np.ones((2, 2), "float32")},
        {"value": 3.0, "dtype": "int64"},
        ref=lambda X, value, dtype: {"Out": np.full(X.shape, value, dtype)},
        name="int64",
    ),
    OpCase(
        "assign_value",
        {},
        {"shape": [2, 2], "dtype": "float32", "fp32_values": [1.0, 2.5, -3.0, 4.0]},
        ref=lambda shape, dtype, fp32_values: {"Out": np.array(fp32_values, dtype).reshape(shape)},
        name="float32",
    ),
    OpCase(
        "assign_value",
        {},
        {"shape": [3], "dtype": "int64", "int64_values": [7, -1, 2]},
        ref=lambda shape, dtype, int64_values: {"Out": np.array(int64_values, dtype)},
        name="int64",
    ),
    # random fills: checked for shape/dtype here, statistics below
    OpCase("uniform_random", {}, {"shape": [3, 4], "min": -2.0, "max": 2.0, "seed": 1}),
    OpCase("gaussian_random", {}, {"shape": [3, 4], "mean": 1.0, "std": 2.0, "seed": 1}),
    OpCase("truncated_gaussian_random", {}, {"shape": [3, 4], "seed": 1}),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_creation(case):
    check_case(case)


def test_deterministic_fills_are_exact():
    for case in CASES[:11]:
        got = run_forward(case)["Out"][0]
        expected = case.ref(**case.inputs, **case.attrs)["Out"]
        assert got.dtype == expected.dtype, case
        np.testing.assert_array_equal(got, expected, err_msg=str(case))


def _random(op, shape, dtype="float32", **attrs):
    case = OpCase(op, {}, {"shape": list(shape), "dtype": dtype, **attrs})
    return run_forward(case)["Out"][0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_random_range_and_statistics(dtype):
    out = _random("uniform_random", [200, 100], dtype, min=-3.0, max=5.0, seed=11)
    assert out.shape == (200, 100) and out.dtype == np.dtype(dtype)
    assert out.min() >= -3.0 and out.max() < 5.0
    # U(-3, 5): mean 1, std 8/sqrt(12); 20000 samples give ~0.016 standard error on the mean
    assert abs(out.mean() - 1.0) < 0.1
    assert abs(out.std() - 8 / np.sqrt(12)) < 0.05


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gaussian_random_statistics(dtype):
    out = _random("gaussian_random", [200, 100], dtype, mean=2.0, std=0.5, seed=12)
    assert out.shape == (200, 100) and out.dtype == np.dtype(dtype)
    assert abs(out.mean() - 2.0) < 0.02
    assert abs(out.std() - 0.5) < 0.02


def test_truncated_gaussian_random_is_truncated_at_two_std():
    out = _random("truncated_gaussian_random", [20000], mean=1.0, std=3.0, seed=13)
    assert out.dtype == np.float32
    assert out.min() >= 1.0 - 6.0 - 1e-5 and out.max() <= 1.0 + 6.0 + 1e-5
    assert abs(out.mean() - 1.0) < 0.1
    # a normal truncated at +-2 sigma has std ~0.88 sigma
    assert abs(out.std() - 0.88 * 3.0) < 0.1


@pytest.mark.parametrize("op", ["uniform_random", "gaussian_random", "truncated_gaussian_random"])
def test_random_seed_determinism(op):
    a = _random(op, [50], seed=42)
    b = _random(op, [50], seed=42)
    c = _random(op, [50], seed=43)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("op", ["uniform_random", "gaussian_random"])
def test_seed_zero_draws_fresh_values(op):
    a = _random(op, [50], seed=0)
    b = _random(op, [50], seed=0)
    assert not np.array_equal(a, b)


def test_uniform_random_diag():
    out = _random(
        "uniform_random", [3, 4], min=0.0, max=0.5, seed=3, diag_num=3, diag_step=1, diag_val=9.0
    )
    # Fluid 1.8.5 sets the flattened positions i * (diag_step + 1): here 0, 2 and 4
    flat = out.reshape(-1)
    np.testing.assert_array_equal(flat[[0, 2, 4]], [9.0, 9.0, 9.0])
    assert (np.delete(flat, [0, 2, 4]) < 0.5).all()


def test_program_random_seed_makes_initialisation_repeat():
    from oar import fluid

    def init_values():
        main, startup = fluid.Program(), fluid.Program()
        startup.random_seed = 90
        with fluid.program_guard(main, startup), fluid.unique_name.guard():
            x = fluid.layers.data("x", shape=[4], dtype="float32")
            fluid.layers.fc(x, size=3)
        scope = fluid.Scope()
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup, scope=scope)
        return np.array(scope.find_var("fc_0.w_0").get_tensor())

    np.testing.assert_array_equal(init_values(), init_values())


def test_fill_constant_layer_dtype_and_value():
    from oar import fluid

    with fluid.program_guard(fluid.Program(), fluid.Program()):
        v = fluid.layers.fill_constant(shape=[2, 2], dtype="int32", value=3)
        z = fluid.layers.zeros(shape=[3], dtype="float64")
        main = fluid.default_main_program()
    a, b = fluid.Executor(fluid.CPUPlace()).run(main, fetch_list=[v, z], scope=fluid.Scope())
    assert a.dtype == np.int32 and a.tolist() == [[3, 3], [3, 3]]
    assert b.dtype == np.float64 and b.tolist() == [0.0, 0.0, 0.0]
