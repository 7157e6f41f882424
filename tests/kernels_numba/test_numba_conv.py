"""oar-kernels-numba's Winograd conv2d and its gradients against the numpy kernel (im2col),
on every padding, odd and even sizes, batch chunks; the cases it hands back; a numeric
gradient check through the Executor."""

from __future__ import annotations

import numpy as np
import pytest
from numba_conv_helpers import BOTH, matches_numpy, require_numba
from numba_conv_helpers import conv_attrs as _attrs

require_numba()

from oar.testing import OpCase, check_case  # noqa: E402
from oar_kernels_numba import conv as conv_mod  # noqa: E402

rng = np.random.default_rng(41)
TOL = {"float32": dict(rtol=2e-5, atol=2e-5), "float64": dict(rtol=1e-10, atol=1e-11)}


@pytest.fixture
def winograd_calls(monkeypatch, count_calls):
    """Counts of the Winograd paths taken; every size goes to them (no SMALL cut-off)."""
    monkeypatch.setattr(conv_mod, "SMALL", 0)
    monkeypatch.setattr(conv_mod, "MIN_CHANNEL_SUM", 16)
    return count_calls(conv_mod, conv="winograd_conv_job", filter_grad="winograd_filter_grad_job")


def _run(numba_pair, x, w, attrs, wanted=BOTH):
    def close(got, want, what):
        np.testing.assert_allclose(got, want, **TOL[x.dtype.name], err_msg=what)

    matches_numpy(numba_pair, x, w, attrs, close, rng, wanted)


WINOGRAD = [  # (x shape, out channels, paddings, padding algorithm)
    ((2, 8, 7, 9), 16, (1, 1), "EXPLICIT"),
    ((3, 16, 6, 6), 8, (0, 0), "EXPLICIT"),
    ((2, 9, 8, 5), 10, (2, 1, 0, 2), "EXPLICIT"),
    ((1, 8, 3, 3), 8, (2, 2), "EXPLICIT"),
    ((2, 12, 5, 8), 9, (0, 0), "SAME"),
    ((2, 8, 6, 7), 8, (0, 0), "VALID"),
    ((5, 32, 8, 8), 24, (1, 1), "EXPLICIT"),
    ((2, 64, 5, 6), 8, (1, 1), "EXPLICIT"),  # 64 channels: the gathering layout copy
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,out_c,pads,algorithm", WINOGRAD)
def test_winograd_matches_im2col(shape, out_c, pads, algorithm, dtype, numba_pair, winograd_calls):
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((out_c, shape[1], 3, 3)).astype(dtype)
    _run(numba_pair, x, w, _attrs(pads, algorithm=algorithm))
    assert winograd_calls == {"conv": 2, "filter_grad": 1}  # forward, dX; dW


@pytest.mark.parametrize("wanted", [{"Input@GRAD"}, {"Filter@GRAD"}])
def test_one_gradient_at_a_time(wanted, numba_pair, winograd_calls):
    x = rng.standard_normal((2, 8, 6, 6)).astype("float32")
    w = rng.standard_normal((8, 8, 3, 3)).astype("float32")
    _run(numba_pair, x, w, _attrs(), frozenset(wanted))


def test_batch_chunks_and_a_ragged_last_chunk(numba_pair, winograd_calls, monkeypatch):
    # chunks of 2 images over a batch of 5: the filter gradient sums three parts
    x = rng.standard_normal((5, 8, 6, 6)).astype("float64")
    w = rng.standard_normal((8, 8, 3, 3)).astype("float64")
    monkeypatch.setattr(conv_mod, "CHUNK_BYTES", 2 * 16 * 9 * 16 * 8)
    monkeypatch.setattr(conv_mod, "MIN_ROWS", 1)
    assert len(conv_mod._chunks(5, 9, 16, 8)) == 3
    _run(numba_pair, x, w, _attrs())


def test_chunk_temporaries_are_scratch_buffers_reused_from_call_to_call(
    numba_pair, winograd_calls, monkeypatch
):
    from oar import scratch as scratch_mod
    from oar.api import release_scratch, scratch_bytes

    x = rng.standard_normal((5, 8, 6, 6)).astype("float32")
    w = rng.standard_normal((8, 8, 3, 3)).astype("float32")
    monkeypatch.setattr(conv_mod, "CHUNK_BYTES", 2 * 16 * 9 * 16 * 4)
    monkeypatch.setattr(conv_mod, "MIN_ROWS", 1)
    release_scratch()
    mine = numba_pair("conv2d_grad", "float32")[0]
    dy = rng.standard_normal((5, 8, 6, 6)).astype("float32")
    ins = {"Input": x, "Filter": w, "Output@GRAD": dy}
    first = mine(dict(ins), _attrs(), BOTH)
    kept = scratch_bytes()
    assert winograd_calls == {"conv": 1, "filter_grad": 1} and kept > 0
    for _ in range(3):
        again = mine(dict(ins), _attrs(), BOTH)
        for k in first:
            np.testing.assert_array_equal(again[k], first[k])
    # per thread (the pool may run chunks on any of its threads): no more than the first call
    assert max(p.nbytes() for p in list(scratch_mod._pools)) <= kept
    release_scratch()
    assert scratch_bytes() == 0


def test_large_paddings_leave_the_input_gradient_to_numpy(numba_pair, winograd_calls):
    # padding 3: the input gradient is not a padded convolution of dy; numpy computes it
    x = rng.standard_normal((2, 8, 4, 4))
    w = rng.standard_normal((8, 8, 3, 3))
    _run(numba_pair, x, w, _attrs((3, 3)))
    assert winograd_calls == {"conv": 1, "filter_grad": 1}


FALLBACK = [  # attrs and shapes Winograd does not take: the numpy kernel's results, exactly
    ("stride 2", (2, 8, 8, 8), (8, 8, 3, 3), _attrs(stride=2)),
    ("dilation 2", (2, 8, 8, 8), (8, 8, 3, 3), _attrs(pads=(2, 2), dilation=2)),
    ("groups 2", (2, 8, 6, 6), (8, 4, 3, 3), _attrs(groups=2)),
    ("7x7", (2, 8, 8, 8), (8, 8, 7, 7), _attrs(pads=(3, 3))),
    ("1x1", (2, 8, 8, 8), (8, 8, 1, 1), _attrs(pads=(0, 0))),
    ("3 input channels", (2, 3, 8, 8), (8, 3, 3, 3), _attrs()),
    ("8 + 4 channels", (2, 8, 8, 8), (4, 8, 3, 3), _attrs()),
    ("NHWC", (2, 6, 6, 8), (8, 8, 3, 3), _attrs(fmt="NHWC")),
]


@pytest.mark.parametrize("why,x_shape,w_shape,attrs", FALLBACK, ids=[f[0] for f in FALLBACK])
def test_other_convolutions_go_to_numpy(why, x_shape, w_shape, attrs, numba_pair, winograd_calls):
    x = rng.standard_normal(x_shape).astype("float32")
    w = rng.standard_normal(w_shape).astype("float32")
    _run(numba_pair, x, w, attrs)
    assert winograd_calls == {"conv": 0, "filter_grad": 0}


def test_few_channels_go_to_numpy_by_default(numba_pair, monkeypatch):
    calls = []
    monkeypatch.setattr(conv_mod, "winograd_conv", lambda *a: calls.append(a))
    x = rng.standard_normal((8, 12, 16, 16)).astype("float32")  # 12 + 12 channels < 32
    _run(numba_pair, x, rng.standard_normal((12, 12, 3, 3)).astype("float32"), _attrs())
    assert not calls


def test_small_inputs_go_to_numpy(numba_pair, monkeypatch):
    calls = []
    monkeypatch.setattr(conv_mod, "winograd_conv", lambda *a: calls.append(a))
    x = rng.standard_normal((1, 8, 4, 4)).astype("float32")  # 128 elements < SMALL
    w = rng.standard_normal((8, 8, 3, 3)).astype("float32")
    _run(numba_pair, x, w, _attrs(), frozenset({"Filter@GRAD"}))
    assert not calls


def test_float32_winograd_stays_within_float32_error_of_float64():
    # a ResNet-sized layer: the transforms add at most a few units in the last place
    x = rng.standard_normal((2, 64, 16, 16))
    w = rng.standard_normal((64, 64, 3, 3)) / 24
    x32, w32 = x.astype("float32"), w.astype("float32")
    u = conv_mod.filter_points(w32, in_major=True)
    got = conv_mod.winograd_conv(x32, u, 1, 1, (16, 16))
    want = conv_mod.winograd_conv(x32.astype("float64"), u.astype("float64"), 1, 1, (16, 16))
    # the float64 Winograd of the same inputs is the exact convolution to ~1e-15
    assert np.abs(got - want).max() <= 2e-6 * np.abs(want).max()


@pytest.mark.parametrize("pads", [(1, 1), (0, 2, 1, 0)])
def test_numeric_gradients_through_the_executor(pads, winograd_calls):
    case = OpCase(
        "conv2d",
        {"Input": rng.uniform(-1, 1, (1, 8, 4, 3)), "Filter": rng.uniform(-1, 1, (8, 8, 3, 3))},
        _attrs(pads),
        ref=None,
        grad=["Input", "Filter"],
    )
    check_case(case)
    assert winograd_calls["conv"] > 0 and winograd_calls["filter_grad"] > 0


def test_results_do_not_depend_on_the_thread_count(
    winograd_calls, conv_same_at_any_thread_count, monkeypatch
):
    monkeypatch.setattr(conv_mod, "CHUNK_BYTES", 16 * 16 * 32 * 4)  # one image per chunk
    monkeypatch.setattr(conv_mod, "MIN_ROWS", 1)
    x = rng.standard_normal((7, 16, 8, 8)).astype("float32")
    w = rng.standard_normal((16, 16, 3, 3)).astype("float32")
    dy = rng.standard_normal((7, 16, 8, 8)).astype("float32")
    conv_same_at_any_thread_count(x, w, dy, _attrs())
    assert winograd_calls == {"conv": 6, "filter_grad": 3}


def test_chunks_hold_enough_tiles_for_the_gemms():
    # 4 tiles per image (a 4x4 output): at least MIN_ROWS tiles per chunk whatever CHUNK_BYTES
    chunks = conv_mod._chunks(64, 4, 512, 4)
    assert chunks[0] == (0, conv_mod.MIN_ROWS // 4) and chunks[-1][1] == 64
    assert conv_mod._chunks(3, 4, 512, 4) == [(0, 3)]


def test_gemms_run_on_one_blas_thread(numba_pair, winograd_calls, monkeypatch):
    # the batch chunks share the cores through the kernel pool; OpenBLAS's own threads would
    # spin on after each GEMM
    from oar import cpu_threads

    if cpu_threads.blas_num_threads() is None:
        pytest.skip("numpy's OpenBLAS was not found")
    seen = []
    real = conv_mod.winograd_conv

    def spy(*a):
        seen.append(cpu_threads.blas_num_threads())
        return real(*a)

    monkeypatch.setattr(conv_mod, "winograd_conv", spy)
    mine, _ = numba_pair("conv2d", "float32")
    before = cpu_threads.blas_num_threads()
    cpu_threads._apply(2)
    try:
        x = rng.standard_normal((2, 8, 6, 6)).astype("float32")
        mine({"Input": x, "Filter": rng.standard_normal((8, 8, 3, 3)).astype("float32")}, _attrs())
        assert cpu_threads.blas_num_threads() == 2  # as it was
    finally:
        cpu_threads._apply(before)
    assert seen == [1]
