"""Kernels split across the kernel thread pool (elementwise, activations, reductions, pooling,
batch_norm, optimizer updates, matrix products): the split forced on small arrays (tiny
``SPLIT_MIN`` and ``PIECE``), results bit for bit the same on 1, 2 and 3 threads (1 thread runs
elementwise maps whole and reductions in the same pieces), and equal to the unsplit kernel (bit
for bit where each element is computed alone, within rounding for sums)."""

import numpy as np
import pytest
from oar.plugins import registries
from oar_kernels_cpu.kernels import _parallel, kernels_for

rng = np.random.default_rng(11)


def _kernel(op_type):
    return next(k.fn for k in kernels_for(op_type))


def _attrs(op_type, **given):
    return registries().ops.get(op_type).complete_attrs(given)


def _copy(inputs):
    return {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inputs.items()}


def _run(op_type, inputs, attrs, *extra):
    out = _kernel(op_type)(_copy(inputs), attrs, *extra)
    return {k: np.array(v, copy=True) for k, v in out.items()}


@pytest.fixture
def threads(monkeypatch):
    """``threads(call)``: ``call()``'s results at 1, 2 and 3 threads with the split forced, and
    unsplit; checks that the forced runs really cut the work into several pieces."""
    counts = []
    real_for = _parallel.parallel_for

    def spy(fn, count, threads=None, blas=True):
        counts.append(count)
        real_for(fn, count, threads, blas)

    monkeypatch.setattr(_parallel, "parallel_for", spy)

    def run(call, splits=True):
        results = []
        for t in (1, 2, 3):
            monkeypatch.setattr(_parallel, "parallel_threads", lambda t=t: t)
            monkeypatch.setattr(_parallel, "SPLIT_MIN", 8)
            monkeypatch.setattr(_parallel, "PIECE", 20)
            counts.clear()
            results.append(call())
            if splits and t > 1:
                assert max(counts, default=0) > 1, "the forced split ran in one piece"
        monkeypatch.setattr(_parallel, "SPLIT_MIN", 1 << 40)
        whole = call()
        for other in results[1:]:
            for slot in results[0]:
                np.testing.assert_array_equal(results[0][slot], other[slot], err_msg=slot)
        return results[0], whole

    return run


def _same(split, whole):
    for slot in whole:
        np.testing.assert_array_equal(split[slot], whole[slot], err_msg=slot)


def _close(split, whole):
    for slot in whole:
        np.testing.assert_allclose(split[slot], whole[slot], rtol=1e-5, atol=1e-6, err_msg=slot)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


BINARY = ["add", "sub", "mul", "div", "max", "min"]
YSHAPES = {"same": ((5, 4, 6), -1), "channel": ((4,), 1), "rows": ((5, 1, 6), -1)}


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize("ykind", sorted(YSHAPES))
def test_elementwise_and_grads(threads, op, ykind):
    yshape, axis = YSHAPES[ykind]
    x, y = f32(5, 4, 6), f32(*yshape)
    if op == "div":
        y = np.abs(y) + 0.5
    op_type = f"elementwise_{op}"
    attrs = _attrs(op_type, axis=axis)
    _same(*threads(lambda: _run(op_type, {"X": x, "Y": y}, attrs)))
    g = {"X": x, "Y": y, "Out@GRAD": f32(5, 4, 6)}
    grad = lambda: _run(op_type + "_grad", g, attrs, {"X@GRAD", "Y@GRAD"})
    # same-shape add: the gradients are Out@GRAD itself, nothing to compute
    split, whole = threads(grad, splits=not (op == "add" and ykind == "same"))
    (_same if ykind == "same" else _close)(split, whole)


@pytest.mark.parametrize(
    "op_type,attrs",
    [("relu", {}), ("tanh", {}), ("sigmoid", {}), ("sqrt", {}), ("gelu", {"approximate": True})],
)
def test_activations_and_grads(threads, op_type, attrs):
    x = np.abs(f32(7, 3, 5)) + 0.1 if op_type == "sqrt" else f32(7, 3, 5)
    attrs = _attrs(op_type, **attrs)
    out = _run(op_type, {"X": x}, attrs)["Out"]
    _same(*threads(lambda: _run(op_type, {"X": x}, attrs)))
    g = {"X": x, "Out": out, "Out@GRAD": f32(*x.shape)}
    _same(*threads(lambda: _run(op_type + "_grad", g, attrs)))


def test_activation_written_into_a_donated_input(threads):
    x = f32(6, 9)
    attrs = _attrs("relu")
    split, whole = threads(lambda: _run("relu", {"X": x}, attrs, frozenset({"X"})))
    _same(split, whole)
    np.testing.assert_array_equal(split["Out"], np.maximum(x, 0))


def test_relu_grad_written_into_the_donated_gradient(threads, monkeypatch):
    y, d = np.maximum(f32(6, 9), 0), f32(6, 9)
    attrs = _attrs("relu")
    donated = frozenset({"Out@GRAD"})
    split, whole = threads(lambda: _run("relu_grad", {"Out": y, "Out@GRAD": d}, attrs, donated))
    _same(split, whole)
    np.testing.assert_array_equal(split["X@GRAD"], d * (y > 0))
    for t in (1, 2):
        monkeypatch.setattr(_parallel, "parallel_threads", lambda t=t: t)
        given = d.copy()
        out = _kernel("relu_grad")({"Out": y, "Out@GRAD": given}, attrs, donated)["X@GRAD"]
        assert out is given  # no new array
        np.testing.assert_array_equal(out, d * (y > 0))


@pytest.mark.parametrize("how", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("dim,keep", [([0], False), ([1, 2], True), ([0, 2], False), (None, False)])
def test_reductions(threads, how, dim, keep):
    x = f32(9, 4, 5)
    attrs = _attrs(f"reduce_{how}", dim=dim or [0], keep_dim=keep, reduce_all=dim is None)
    split, whole = threads(lambda: _run(f"reduce_{how}", {"X": x}, attrs))
    (_same if how in ("max", "min") or 0 not in (dim or [0]) else _close)(split, whole)
    expect = getattr(x, how)(axis=tuple(dim) if dim else None, keepdims=keep)
    np.testing.assert_allclose(split["Out"].reshape(np.shape(expect)), expect, rtol=1e-5)


@pytest.mark.parametrize("how", ["sum", "mean"])
def test_reduction_grads(threads, how):
    x = f32(9, 4, 5)
    attrs = _attrs(f"reduce_{how}", dim=[1], keep_dim=False)
    g = {"X": x, "Out@GRAD": f32(9, 5)}
    _same(*threads(lambda: _run(f"reduce_{how}_grad", g, attrs)))


POOLS = {  # name: attrs
    "max_tiled": dict(pooling_type="max", ksize=[2, 2], strides=[2, 2]),
    "max_padded": dict(pooling_type="max", ksize=[3, 3], strides=[2, 2], paddings=[1, 1]),
    "avg_padded": dict(pooling_type="avg", ksize=[3, 3], strides=[1, 1], paddings=[1, 1]),
}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_pool2d_and_grad(threads, name):
    x = f32(3, 4, 8, 8)
    attrs = _attrs("pool2d", **POOLS[name])
    split, whole = threads(lambda: _run("pool2d", {"X": x}, attrs))
    _same(split, whole)
    g = {"X": x, "Out": split["Out"], "Out@GRAD": f32(*split["Out"].shape)}
    _same(*threads(lambda: _run("pool2d_grad", g, attrs)))


@pytest.mark.parametrize("name", sorted(POOLS))
@pytest.mark.parametrize("t", [1, 2])
def test_pool2d_grad_is_an_array_of_its_own(monkeypatch, name, t):
    """Not a reshaped view: the plan donates only arrays that own their memory, and relu_grad
    after a pooling gradient writes into it rather than into a new array."""
    monkeypatch.setattr(_parallel, "parallel_threads", lambda: t)
    monkeypatch.setattr(_parallel, "SPLIT_MIN", 8)
    monkeypatch.setattr(_parallel, "PIECE", 20)
    x = f32(3, 4, 8, 8)
    attrs = _attrs("pool2d", **POOLS[name])
    y = _run("pool2d", {"X": x}, attrs)["Out"]
    g = {"X": x, "Out": y, "Out@GRAD": f32(*y.shape)}
    dx = _kernel("pool2d_grad")(g, attrs)["X@GRAD"]
    assert dx.base is None and dx.flags.writeable and dx.shape == x.shape


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("is_test", [False, True])
def test_batch_norm_and_grad(threads, layout, is_test):
    x = f32(6, 3, 4, 5) * 2 + 1
    c = x.shape[1] if layout == "NCHW" else x.shape[3]
    attrs = _attrs("batch_norm", data_layout=layout, is_test=is_test)
    ins = {
        "X": x,
        "Scale": f32(c),
        "Bias": f32(c),
        "Mean": f32(c),
        "Variance": np.abs(f32(c)) + 0.5,
    }
    split, whole = threads(lambda: _run("batch_norm", ins, attrs))
    _close(split, whole)
    g = dict(ins, SavedMean=split["SavedMean"], SavedVariance=split["SavedVariance"])
    g["Y@GRAD"] = f32(*x.shape)
    wanted = {"X@GRAD", "Scale@GRAD", "Bias@GRAD"}
    _close(*threads(lambda: _run("batch_norm_grad", g, attrs, wanted)))


def test_batch_norm_statistics_match_numpy(threads):
    x = f32(8, 3, 5, 5) * 3 - 2
    attrs = _attrs("batch_norm", momentum=0.0)
    ins = {"X": x, "Scale": np.ones(3, np.float32), "Bias": np.zeros(3, np.float32)}
    ins.update(Mean=np.zeros(3, np.float32), Variance=np.ones(3, np.float32))
    split, _ = threads(lambda: _run("batch_norm", ins, attrs))
    np.testing.assert_allclose(split["MeanOut"], x.mean(axis=(0, 2, 3)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(split["VarianceOut"], x.var(axis=(0, 2, 3)), rtol=1e-4)


def _lr(v=0.01):
    return np.array([v], np.float32)


OPTIMIZERS = {
    "sgd": lambda p, g: ({"Param": p, "Grad": g, "LearningRate": _lr()}, {}),
    "momentum": lambda p, g: (
        {"Param": p, "Grad": g, "Velocity": f32(*p.shape), "LearningRate": _lr()},
        {"mu": 0.9, "use_nesterov": True},
    ),
    "adam": lambda p, g: (
        {
            "Param": p,
            "Grad": g,
            "Moment1": f32(*p.shape),
            "Moment2": np.abs(f32(*p.shape)),
            "Beta1Pow": np.array([0.9], np.float32),
            "Beta2Pow": np.array([0.999], np.float32),
            "LearningRate": _lr(),
        },
        {},
    ),
}


@pytest.mark.parametrize("op_type", sorted(OPTIMIZERS))
def test_dense_optimizer_updates(threads, op_type):
    ins, attrs = OPTIMIZERS[op_type](f32(7, 11), f32(7, 11))
    attrs = _attrs(op_type, **attrs)
    _same(*threads(lambda: _run(op_type, ins, attrs)))


def test_pieces_are_fixed_by_size_and_cover_every_row(monkeypatch):
    monkeypatch.setattr(_parallel, "SPLIT_MIN", 100)
    monkeypatch.setattr(_parallel, "PIECE", 30)
    assert _parallel.pieces(99) == [(0, 99)]  # below the threshold: one piece
    assert _parallel.pieces(1, 500) == [(0, 1)]  # one row cannot be cut
    cuts = _parallel.pieces(25, 7)  # 4 rows of 7 per piece
    assert cuts[0] == (0, 4) and cuts[-1] == (24, 25)
    assert [b for _, b in cuts[:-1]] == [a for a, _ in cuts[1:]]
    assert _parallel.pieces(10, 50) == [(i, i + 1) for i in range(10)]


GEMMS = {  # name: (a shape, b shape, a transposed view)
    "rows": ((70, 9), (9, 6), False),
    "cols": ((5, 9), (9, 70), False),
    "transposed": ((9, 70), (9, 6), True),
    "batched": ((6, 5, 4), (6, 4, 3), False),
    "float64": ((50, 33), (33, 20), False),
}


@pytest.mark.parametrize("name", sorted(GEMMS))
def test_matrix_products_split(threads, monkeypatch, name):
    from oar_kernels_cpu.kernels import _gemm

    ashape, bshape, transposed = GEMMS[name]
    a, b = f32(*ashape), f32(*bshape)
    if name == "float64":
        a, b = a.astype(np.float64), b.astype(np.float64)
    a = a.T if transposed else a
    monkeypatch.setattr(_gemm, "BLAS_SERIAL_MACS", 0)
    monkeypatch.setattr(_gemm, "SPLIT_MACS", 16)
    monkeypatch.setattr(_gemm, "PIECE_MACS", 16)
    monkeypatch.setattr(_gemm, "ALIGN", 16)  # the real alignment is 32: fewer rows suffice here
    split, _ = threads(lambda: {"Out": _gemm.matmul(np, a, b)})  # 1 thread: one call
    np.testing.assert_array_equal(split["Out"], a @ b)


@pytest.mark.parametrize("op_type", ["mul", "matmul"])
def test_product_gradients_run_together(threads, monkeypatch, op_type):
    from oar_kernels_cpu.kernels import _gemm

    monkeypatch.setattr(_gemm, "BLAS_SERIAL_MACS", 0)
    monkeypatch.setattr(_gemm, "SPLIT_MACS", 10000)  # whole products (< 64 rows), two at once
    x, y, d = f32(40, 24), f32(24, 16), f32(40, 16)
    attrs = _attrs(op_type)
    g = {"X": x, "Y": y, "Out@GRAD": d}
    split, whole = threads(lambda: _run(op_type + "_grad", g, attrs, {"X@GRAD", "Y@GRAD"}))
    _same(split, whole)
    np.testing.assert_allclose(split["X@GRAD"], d @ y.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(split["Y@GRAD"], x.T @ d, rtol=1e-5, atol=1e-5)
