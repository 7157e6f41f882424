"""oar-kernels-numba's Winograd F(2x2, 5x5) conv2d and its gradients against the numpy kernel
(im2col): paddings, odd and even sizes, batch chunks (ragged ones too), both dtypes; the cases
it hands back; thread-count independence; a numeric gradient check through the Executor."""

from __future__ import annotations

import numpy as np
import pytest
from numba_conv_helpers import BOTH, conv_attrs, matches_numpy, require_numba

require_numba()

from oar.testing import OpCase, check_case  # noqa: E402
from oar_kernels_numba import _winograd5 as wg5  # noqa: E402
from oar_kernels_numba import conv as conv_mod  # noqa: E402
from oar_kernels_numba import winograd5  # noqa: E402

rng = np.random.default_rng(55)
#: largest difference from the numpy kernel, relative to the largest value: Winograd's
#: transforms round differently from im2col's dot products (about 3e-6 in float32)
TOL = {"float32": 2e-5, "float64": 1e-12}


def _attrs(pads=(2, 2), **kw):
    return conv_attrs(pads, **kw)


@pytest.fixture
def calls(monkeypatch, count_calls):
    """Counts of the F(2x2, 5x5) paths taken; every size goes to them (no SMALL cut-off)."""
    monkeypatch.setattr(conv_mod, "SMALL", 0)
    return count_calls(winograd5, conv="conv_job", filter_grad="filter_grad_job")


def _run(numba_pair, x, w, attrs, wanted=BOTH):
    def close(got, want, what):
        err = np.abs(got - want).max() if want.size else 0.0
        assert err <= TOL[x.dtype.name] * max(np.abs(want).max(), 1.0), f"{what}: {err}"

    matches_numpy(numba_pair, x, w, attrs, close, rng, wanted)


CASES = [  # (x shape, out channels, paddings, padding algorithm)
    ((3, 4, 14, 14), 6, (2, 2), "EXPLICIT"),  # the MNIST CNN's second layer, narrower
    ((2, 5, 9, 7), 4, (1, 2, 0, 3), "EXPLICIT"),  # odd sizes, uneven paddings
    ((2, 4, 6, 6), 5, (0, 0), "EXPLICIT"),  # a 2x2 output
    ((1, 4, 5, 5), 4, (4, 4), "EXPLICIT"),  # padding 4: dX pads dy by nothing
    ((2, 6, 8, 5), 4, (0, 0), "SAME"),
    ((2, 4, 7, 8), 4, (0, 0), "VALID"),
    ((17, 4, 6, 6), 4, (2, 2), "EXPLICIT"),  # a ragged last chunk (16 + 1 images)
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,out_c,pads,algorithm", CASES)
def test_winograd5_matches_im2col(shape, out_c, pads, algorithm, dtype, numba_pair, calls):
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((out_c, shape[1], 5, 5)).astype(dtype)
    _run(numba_pair, x, w, _attrs(pads, algorithm=algorithm))
    assert calls == {"conv": 2, "filter_grad": 1}  # forward, dX; dW


@pytest.mark.parametrize("wanted", [{"Input@GRAD"}, {"Filter@GRAD"}])
def test_one_gradient_at_a_time(wanted, numba_pair, calls):
    x = rng.standard_normal((2, 4, 6, 7)).astype("float32")
    w = rng.standard_normal((5, 4, 5, 5)).astype("float32")
    _run(numba_pair, x, w, _attrs(), frozenset(wanted))
    dx = "Input@GRAD" in wanted
    assert calls == {"conv": 1 + dx, "filter_grad": int(not dx)}  # forward and the gradient


def test_paddings_over_4_leave_the_input_gradient_to_numpy(numba_pair, calls):
    x = rng.standard_normal((2, 4, 3, 3))
    w = rng.standard_normal((4, 4, 5, 5))
    _run(numba_pair, x, w, _attrs((5, 5)))
    assert calls == {"conv": 1, "filter_grad": 1}


FALLBACK = [  # 5x5 convolutions F(2x2, 5x5) does not take
    ("stride 2", (2, 4, 9, 9), (4, 4, 5, 5), _attrs(stride=2)),
    ("dilation 2", (2, 4, 9, 9), (4, 4, 5, 5), _attrs(dilation=2)),
    ("groups 2", (2, 8, 6, 6), (8, 4, 5, 5), _attrs(groups=2)),
    ("5x3", (2, 4, 8, 8), (4, 4, 5, 3), _attrs()),
    ("3 input channels", (2, 3, 8, 8), (8, 3, 5, 5), _attrs()),
]


@pytest.mark.parametrize("why,x_shape,w_shape,attrs", FALLBACK, ids=[f[0] for f in FALLBACK])
def test_other_5x5_convolutions_go_to_numpy(why, x_shape, w_shape, attrs, numba_pair, calls):
    x = rng.standard_normal(x_shape).astype("float32")
    w = rng.standard_normal(w_shape).astype("float32")
    _run(numba_pair, x, w, attrs)
    assert calls == {"conv": 0, "filter_grad": 0}


def test_chunks_are_lanes_of_images_fewer_when_large():
    assert winograd5.chunks(40, 49, 40, 4) == [(0, 16), (16, 32), (32, 40)]
    assert winograd5.chunks(3, 49, 40, 4) == [(0, 3)]
    # 36 points x 64 tiles x 1024 channels x 4 bytes = 9.4 MB per image: one image a chunk
    assert winograd5.chunks(2, 64, 1024, 4) == [(0, 1), (1, 2)]


def test_results_do_not_depend_on_the_thread_count(
    calls, conv_same_at_any_thread_count, monkeypatch
):
    monkeypatch.setattr(winograd5, "LANES", 2)  # 7 images: chunks of 2, 2, 2, 1
    x = rng.standard_normal((7, 6, 8, 8)).astype("float32")
    w = rng.standard_normal((5, 6, 5, 5)).astype("float32")
    dy = rng.standard_normal((7, 5, 8, 8)).astype("float32")
    conv_same_at_any_thread_count(x, w, dy, _attrs())
    assert calls == {"conv": 6, "filter_grad": 3}


def test_float32_stays_within_float32_error_of_float64():
    # the MNIST CNN's second layer: float64 Winograd is the exact convolution to ~1e-15
    x = rng.standard_normal((16, 20, 14, 14))
    w = rng.standard_normal((20, 20, 5, 5)) / 22
    x32, w32 = x.astype("float32"), w.astype("float32")
    got = winograd5.conv2d(x32, w32, (2, 2, 2, 2), (14, 14))
    want = winograd5.conv2d(x32.astype("float64"), w32.astype("float64"), (2, 2, 2, 2), (14, 14))
    assert np.abs(got - want).max() <= 5e-6 * np.abs(want).max()


def test_the_transforms_compute_a_5x5_correlation():
    # Y = A^T [(G g G^T) (.) (B^T d B)] A on one 6x6 tile, through the compiled transforms
    d = rng.standard_normal((1, 1, 6, 6))
    g = rng.standard_normal((1, 1, 5, 5))
    xp = np.zeros((1, 6, 2, 3))
    wg5.to_planes(d, 0, 1, 0, 0, xp)
    v = np.empty((36, 1, 1, 1))
    wg5.input_transform(xp, 1, v)
    mt = (wg5.filter_points(g)[:, :, :, None] * v).reshape(36, 1, 1, 1)
    yt = np.empty((1, 2, 2, 1))
    wg5.output_transform(mt, yt)
    want = [[np.sum(g[0, 0] * d[0, 0, i : i + 5, j : j + 5]) for j in range(2)] for i in range(2)]
    np.testing.assert_allclose(yt[0, :, :, 0], want, rtol=1e-12)


@pytest.mark.parametrize("pads", [(2, 2), (1, 0, 2, 3)])
def test_numeric_gradients_through_the_executor(pads, calls):
    case = OpCase(
        "conv2d",
        {"Input": rng.uniform(-1, 1, (2, 4, 5, 4)), "Filter": rng.uniform(-1, 1, (4, 4, 5, 5))},
        _attrs(pads),
        ref=None,
        grad=["Input", "Filter"],
    )
    check_case(case)
    assert calls["conv"] > 0 and calls["filter_grad"] > 0


def test_chunks_reuse_their_buffers_from_call_to_call():
    # the transformed tiles of a 16-image chunk take 4.5 MB; reused, a call allocates little
    # more than its output (250 kB) and the transformed filter
    import tracemalloc

    x = rng.standard_normal((16, 20, 14, 14)).astype("float32")
    dy = rng.standard_normal((16, 20, 14, 14)).astype("float32")
    w = rng.standard_normal((20, 20, 5, 5)).astype("float32")
    for _call in ("first: buffers made", "second: buffers reused"):
        tracemalloc.start()
        try:
            winograd5.conv2d(x, w, (2, 2, 2, 2), (14, 14))
            winograd5.run(winograd5.filter_grad_job(x, dy, 2, 2))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 1.5e6, peak
