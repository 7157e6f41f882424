"""conv2d's kernel paths, each forced on small arrays and checked against a direct reference:
image-major and channel-major columns, batch chunks of one image, the in-place 1x1 GEMM, and
scratch buffers reused across calls of different shapes."""

import numpy as np
import pytest
from oar import scratch as core_scratch
from oar_kernels_cpu.kernels import _parallel, _scratch
from oar_kernels_cpu.kernels import conv as conv_mod

rng = np.random.default_rng(7)


def _attrs(stride, pad, dilation=1, groups=1):
    return {
        "strides": [stride, stride],
        "paddings": [pad, pad],
        "padding_algorithm": "EXPLICIT",
        "dilations": [dilation, dilation],
        "groups": groups,
        "data_format": "NCHW",
    }


def _reference(x, w, dy, stride, pad, dilation, groups):
    """Output, dX and dW by a sum over filter taps on the padded input (no im2col)."""
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    og = oc // groups
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
    y = np.zeros((n, oc, oh, ow))
    dxp = np.zeros(xp.shape)
    dw = np.zeros(w.shape)
    for g in range(groups):
        cs, os_ = slice(g * cg, (g + 1) * cg), slice(g * og, (g + 1) * og)
        for i in range(kh):
            for j in range(kw):
                hs = slice(i * dilation, i * dilation + stride * (oh - 1) + 1, stride)
                ws = slice(j * dilation, j * dilation + stride * (ow - 1) + 1, stride)
                patch = xp[:, cs, hs, ws]
                y[:, os_] += np.einsum("nchw,oc->nohw", patch, w[os_, :, i, j])
                dw[os_, :, i, j] = np.einsum("nohw,nchw->oc", dy[:, os_], patch)
                dxp[:, cs, hs, ws] += np.einsum("nohw,oc->nchw", dy[:, os_], w[os_, :, i, j])
    return y, dxp[:, :, pad : pad + h, pad : pad + wd], dw


SHAPES = [  # (x shape, w shape, stride, pad, dilation, groups)
    ((3, 4, 7, 7), (5, 4, 3, 3), 1, 1, 1, 1),
    ((3, 4, 9, 8), (6, 4, 3, 3), 2, 1, 1, 1),
    ((2, 4, 8, 8), (4, 2, 3, 3), 1, 2, 2, 2),
    ((2, 3, 6, 6), (8, 3, 1, 1), 1, 0, 1, 1),
    ((2, 3, 7, 7), (8, 3, 1, 1), 2, 0, 1, 1),
]
PATHS = {  # constants of conv.py forcing each path
    "image_major": {"IMAGE_MAJOR_PIXELS": 0, "GEMM_1X1_PIXELS": 1 << 30},
    "channel_major": {"IMAGE_MAJOR_PIXELS": 1 << 30, "GEMM_1X1_PIXELS": 1 << 30},
    "gemm_1x1": {"IMAGE_MAJOR_PIXELS": 0, "GEMM_1X1_PIXELS": 0},
    "one_image_chunks": {"CHUNK_BYTES": 1, "IMAGE_MAJOR_PIXELS": 1 << 30},
    "one_image_chunks_image_major": {"CHUNK_BYTES": 1, "IMAGE_MAJOR_PIXELS": 0},
}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}s{s[2]}p{s[3]}")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv_kernel_path(monkeypatch, path, shape, dtype):
    for name, value in PATHS[path].items():
        monkeypatch.setattr(conv_mod, name, value)
    xs, wsh, stride, pad, dilation, groups = shape
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(wsh).astype(dtype)
    attrs = _attrs(stride, pad, dilation, groups)
    y = conv_mod._conv({"Input": x, "Filter": w}, attrs)["Output"]
    dy = rng.standard_normal(y.shape).astype(dtype)
    grads = conv_mod._conv_grad(
        {"Input": x, "Filter": w, "Output@GRAD": dy}, attrs, {"Input@GRAD", "Filter@GRAD"}
    )
    ref_y, ref_dx, ref_dw = _reference(x, w, dy, stride, pad, dilation, groups)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-10}
    for got, want in ((y, ref_y), (grads["Input@GRAD"], ref_dx), (grads["Filter@GRAD"], ref_dw)):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, want, **tol)


def test_scratch_reuses_and_resizes():
    a = _scratch.scratch(np, "t", (4, 5), np.float32)
    a[...] = 1
    b = _scratch.scratch(np, "t", (2, 3), np.float32)
    assert np.shares_memory(a, b) and b.shape == (2, 3) and b.flags.c_contiguous
    c = _scratch.scratch(np, "t", (8, 8), np.float32)  # larger: a new buffer
    assert c.shape == (8, 8) and not np.shares_memory(a, c)
    assert not np.shares_memory(c, _scratch.scratch(np, "t", (8, 8), np.float64))
    big = _scratch.scratch(np, "t", (core_scratch.MAX_BYTES // 4 + 1,), np.float32)
    assert not np.shares_memory(big, _scratch.scratch(np, "t", (8, 8), np.float32))
    _scratch.release()


@pytest.mark.parametrize("threads", [1, 2])
def test_conv2d_grad_scratch_does_not_grow_and_is_released(monkeypatch, threads):
    """The MNIST CNN's first layer in small (one input channel, 5x5, padding 2), in batch
    chunks: repeated gradient calls keep no more scratch per thread than the first call at one
    thread, give the same numbers at 1 and 2 threads, and ``release_scratch`` drops every
    thread's buffers."""
    monkeypatch.setattr(conv_mod, "CHUNK_BYTES", 8 * 25 * 144 * 4)  # chunks of 8 images
    x = rng.standard_normal((32, 1, 12, 12)).astype("float32")
    w = rng.standard_normal((4, 1, 5, 5)).astype("float32")
    dy = rng.standard_normal((32, 4, 12, 12)).astype("float32")
    attrs = _attrs(1, 2)

    def grads():
        ins = {"Input": x, "Filter": w, "Output@GRAD": dy}
        return conv_mod._conv_grad(ins, attrs, {"Input@GRAD", "Filter@GRAD"})

    _scratch.release()
    monkeypatch.setattr(_parallel, "parallel_threads", lambda: 1)
    want = grads()
    one = _scratch.scratch_bytes()
    assert one > 0
    monkeypatch.setattr(_parallel, "parallel_threads", lambda: threads)
    kept = []
    for _ in range(6):
        got = grads()
        # per thread (the pool may run chunks on any of its threads)
        kept.append(max(p.nbytes() for p in list(core_scratch._pools)))
        for slot in want:
            np.testing.assert_array_equal(got[slot], want[slot], err_msg=slot)
    assert max(kept) <= one, kept
    if threads == 1:
        assert kept == [one] * 6 and _scratch.scratch_bytes() == one
    _scratch.release()
    assert _scratch.scratch_bytes() == 0


@pytest.mark.parametrize("path", ["one_image_chunks", "one_image_chunks_image_major"])
@pytest.mark.parametrize("shape", SHAPES[:3], ids=lambda s: f"{s[0]}x{s[1]}s{s[2]}p{s[3]}")
def test_conv_results_do_not_depend_on_threads(monkeypatch, path, shape):
    for name, value in PATHS[path].items():
        monkeypatch.setattr(conv_mod, name, value)
    xs, wsh, stride, pad, dilation, groups = shape
    x = rng.standard_normal(xs).astype("float32")
    w = rng.standard_normal(wsh).astype("float32")
    attrs = _attrs(stride, pad, dilation, groups)
    dy = None
    results = []
    for threads in (1, 2, 3):
        monkeypatch.setattr(_parallel, "parallel_threads", lambda t=threads: t)
        y = conv_mod._conv({"Input": x, "Filter": w}, attrs)["Output"]
        dy = rng.standard_normal(y.shape).astype("float32") if dy is None else dy
        g = conv_mod._conv_grad(
            {"Input": x, "Filter": w, "Output@GRAD": dy}, attrs, {"Input@GRAD", "Filter@GRAD"}
        )
        results.append((y, g["Input@GRAD"], g["Filter@GRAD"]))
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


def test_parallel_for_covers_every_piece_and_raises():
    seen = []
    _parallel.parallel_for(seen.append, 50, threads=3)
    assert sorted(seen) == list(range(50))

    def boom(i):
        if i == 7:
            raise ValueError("piece 7")

    with pytest.raises(ValueError, match="piece 7"):
        _parallel.parallel_for(boom, 20, threads=2)


def test_parallel_threads_is_one_off_the_main_thread():
    import threading

    got = []
    t = threading.Thread(target=lambda: got.append(_parallel.parallel_threads()))
    t.start()
    t.join(timeout=30)
    assert got == [1]
