"""cos_sim/label_smooth/reverse/roll/multiplex/eye/diag/unique/size/isfinite/has_inf/has_nan/sum layers and
the composite dice_loss/npair_loss, against numpy; plus bad input."""

import numpy as np
import pytest
from oar import fluid

L = fluid.layers
rng = np.random.default_rng(11)


def _x(name, shape, dtype="float32"):
    return L.data(name, list(shape), dtype=dtype, append_batch_size=False)


def _run(fn, feed):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        outs = fn()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    return exe.run(main, feed=feed, fetch_list=outs, scope=scope)


def test_dice_and_npair_losses_match_numpy():
    prob = rng.dirichlet(np.ones(3), 4).astype("float32")
    lab = np.array([[0], [2], [1], [2]], "int64")
    a = rng.normal(size=(4, 3)).astype("float32")
    p = rng.normal(size=(4, 3)).astype("float32")
    nl = np.array([1, 2, 1, 3], "float32")
    dice, npair = _run(
        lambda: [
            L.dice_loss(_x("prob", prob.shape), _x("lab", lab.shape, "int64")),
            L.npair_loss(_x("a", a.shape), _x("p", p.shape), _x("nl", nl.shape)),
        ],
        {"prob": prob, "lab": lab, "a": a, "p": p, "nl": nl},
    )
    hot = np.eye(3)[lab[:, 0]]
    exp_dice = np.mean(1 - 2 * (prob * hot).sum(1) / (prob.sum(1) + hot.sum(1) + 1e-5))
    np.testing.assert_allclose(dice, [exp_dice], rtol=1e-5)
    t = (nl[:, None] == nl[None, :]).astype(float)
    t /= t.sum(1, keepdims=True)
    sim = a @ p.T
    logp = sim - sim.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    ce = -(t * logp).sum(1, keepdims=True)
    l2 = ((a**2).sum(1).mean() + (p**2).sum(1).mean()) * 0.25 * 0.002
    np.testing.assert_allclose(npair, [l2 + (t * ce).sum(0).mean()], rtol=1e-5)


def test_small_tensor_layers():
    x = rng.normal(size=(3, 4)).astype("float32")
    bad = np.array([1.0, np.nan], "float32")

    def net():
        a = _x("x", x.shape)
        b = _x("bad", bad.shape)
        return [
            L.reverse(a, 1),
            L.roll(a, 1, dims=0),
            L.size(a),
            L.isfinite(a),
            L.has_nan(b),
            L.has_inf(b),
            L.sum([a, a]),
            L.eye(2, batch_shape=[3]),
            L.diag(np.array([1.0, 2.0], "float32")),
            L.cos_sim(a, a),
            L.label_smooth(L.one_hot(L.fill_constant([3, 1], "int64", 1), 4), epsilon=0.2),
        ]

    rev, rol, size, fin, nan, inf, s, eye, dg, cs, ls = _run(net, {"x": x, "bad": bad})
    np.testing.assert_array_equal(rev, x[:, ::-1])
    np.testing.assert_array_equal(rol, np.roll(x, 1, 0))
    assert size[0] == 12 and fin[0] and nan[0] and not inf[0]
    np.testing.assert_array_equal(s, 2 * x)
    np.testing.assert_array_equal(eye, np.tile(np.eye(2, dtype="float32"), (3, 1, 1)))
    np.testing.assert_array_equal(dg, np.diag([1.0, 2.0]))
    np.testing.assert_allclose(cs, np.ones((3, 1)), rtol=1e-6)
    np.testing.assert_allclose(ls, np.tile([0.05, 0.85, 0.05, 0.05], (3, 1)), rtol=1e-6)


def test_cos_sim_trains_toward_alignment():
    """The recommender book model's cos_sim: gradients pull a parameter row toward the target."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        target = _x("t", (1, 3))
        w = L.create_parameter(
            [1, 3], "float32", default_initializer=fluid.initializer.Constant(0.5)
        )
        loss = L.reduce_mean(L.scale(L.cos_sim(w, target), -1.0))
        fluid.optimizer.SGD(0.5).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    t = np.array([[1.0, -1.0, 0.2]], "float32")
    first = exe.run(main, feed={"t": t}, fetch_list=[loss], scope=scope)[0]
    for _ in range(30):
        last = exe.run(main, feed={"t": t}, fetch_list=[loss], scope=scope)[0]
    assert last[0] < first[0] and last[0] < -0.95


@pytest.mark.parametrize(
    "fn, exc, match",
    [
        (lambda: L.cos_sim(_x("x", (3, 4)), _x("y", (2, 4))), ValueError, "rows"),
        (lambda: L.cos_sim(_x("x", (3, 4)), _x("y", (3, 5))), ValueError, "differ"),
        (lambda: L.label_smooth(_x("x", (3, 4)), epsilon=1.5), ValueError, "epsilon"),
        (
            lambda: L.label_smooth(_x("x", (3, 4)), prior_dist=_x("p", (1, 3))),
            ValueError,
            "PriorDist",
        ),
        (lambda: L.reverse(_x("x", (3, 4)), [2]), ValueError, "out of range"),
        (lambda: L.roll(_x("x", (3, 4)), [1, 2], [0]), ValueError, "same length"),
        (
            lambda: L.multiplex([_x("x", (3, 4))], _x("i", (3, 1), "int32")),
            ValueError,
            "at least 2",
        ),
        (
            lambda: L.multiplex([_x("x", (3, 4)), _x("y", (3, 5))], _x("i", (3, 1), "int32")),
            ValueError,
            "differs",
        ),
        (lambda: L.eye(-1), ValueError, "num_rows"),
        (lambda: L.unique(_x("x", (3, 4))), ValueError, "1-D"),
        (
            lambda: L.margin_rank_loss(_x("l", (3, 1)), _x("a", (3, 1)), _x("b", (4, 1))),
            ValueError,
            "differs",
        ),
        (
            lambda: L.rank_loss(_x("l", (3, 2)), _x("a", (3, 2)), _x("b", (3, 2))),
            ValueError,
            r"\[N, 1\]",
        ),
    ],
)
def test_bad_input(fn, exc, match):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), pytest.raises(exc, match=match):
        fn()


def test_random_like_layers_and_bad_input():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        noise_in = L.data("n", [4], dtype="float32")
        u = L.uniform_random_batch_size_like(noise_in, [-1, 7])
        g = L.gaussian_random_batch_size_like(noise_in, [-1, 3], std=0.1)
        assert u.shape == (-1, 7) and g.shape == (-1, 3)
        assert [op.type for op in main.global_block().ops] == [
            "uniform_random_batch_size_like",
            "gaussian_random_batch_size_like",
        ]
        with pytest.raises(ValueError, match="output_dim_idx"):
            L.uniform_random_batch_size_like(noise_in, [-1, 7], output_dim_idx=2)
        with pytest.raises(ValueError, match="min"):
            L.uniform_random_batch_size_like(noise_in, [-1, 7], min=1.0, max=0.0)
        with pytest.raises(ValueError, match="shard_id"):
            L.shard_index(L.data("ids", [1], dtype="int64"), 20, 2, 2)
    out = fluid.Executor(fluid.CPUPlace()).run(
        main, feed={"n": np.zeros((6, 4), "float32")}, fetch_list=[u, g]
    )
    assert out[0].shape == (6, 7) and out[1].shape == (6, 3)


def test_rearrange_layers_build_fluid_ops_and_run():
    x = rng.normal(size=(4, 3)).astype("float32")
    img = rng.normal(size=(1, 8, 2, 2)).astype("float32")

    def net():
        a, im = _x("x", x.shape), _x("img", img.shape)
        return [
            L.pixel_shuffle(im, 2),
            L.shuffle_channel(im, 2),
            L.crop_tensor(a, [2, -1], [1, 0]),
            L.pad_constant_like(a, L.crop_tensor(a, [2, 2]), 9.0),
            L.tril(a),
            L.triu(a, 1),
            L.scatter_nd(
                L.assign(np.array([[0], [0]], "int64")),
                L.assign(np.ones((2, 3), "float32")),
                [2, 3],
            ),
            L.randint(5, shape=[3]),
            L.rank(im),
            L.logsumexp(a, dim=1, keepdim=True),
            L.logsumexp(a),
        ]

    ps, sc, cr, pcl, lo, up, snd, ri, rk, lse, lse_all = _run(net, {"x": x, "img": img})
    assert ps.shape == (1, 2, 4, 4) and sc.shape == img.shape
    np.testing.assert_array_equal(cr, x[1:3])
    np.testing.assert_array_equal(pcl[:2, :2], x[:2, :2])
    assert (pcl[2:] == 9).all() and (pcl[:, 2:] == 9).all()
    np.testing.assert_array_equal(lo, np.tril(x))
    np.testing.assert_array_equal(up, np.triu(x, 1))
    np.testing.assert_array_equal(snd, [[2, 2, 2], [0, 0, 0]])
    assert ri.dtype == np.int64 and ri.shape == (3,) and (0 <= ri).all() and (ri < 5).all()
    assert rk.shape == () and int(rk) == 4
    np.testing.assert_allclose(lse, np.log(np.exp(x).sum(1, keepdims=True)), rtol=1e-5)
    np.testing.assert_allclose(lse_all, [np.log(np.exp(x).sum())], rtol=1e-5)


def test_ctr_losses_layers():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        t = L.teacher_student_sigmoid_loss(_x("x", (3, 1)), _x("l", (3, 1)))
        f = L.sigmoid_focal_loss(_x("y", (3, 4)), _x("c", (3, 1), "int32"), _x("n", (1,), "int32"))
        assert t.shape == (3, 1) and f.shape == (3, 4)
        assert [op.type for op in main.global_block().ops] == [
            "teacher_student_sigmoid_loss",
            "sigmoid_focal_loss",
        ]
        with pytest.raises(TypeError, match="int32"):
            L.sigmoid_focal_loss(
                _x("y2", (3, 4)), _x("c2", (3, 1), "float32"), _x("n2", (1,), "int32")
            )
        with pytest.raises(ValueError, match="soft_max_lower_bound"):
            L.teacher_student_sigmoid_loss(_x("x3", (3, 1)), _x("l3", (3, 1)), 1.0, 2.0)


@pytest.mark.parametrize(
    "fn, exc, match",
    [
        (lambda: L.pixel_shuffle(_x("x", (1, 6, 2, 2)), 2), ValueError, "divisible"),
        (lambda: L.pixel_shuffle(_x("x", (6, 2, 2)), 1), ValueError, "4-D"),
        (lambda: L.shuffle_channel(_x("x", (1, 6, 2, 2)), 4), ValueError, "divide"),
        (lambda: L.crop_tensor(_x("x", (3, 4)), [2, 5]), ValueError, "runs past"),
        (lambda: L.crop_tensor(_x("x", (3, 4)), [2]), ValueError, "one entry per dim"),
        (lambda: L.pad_constant_like(_x("x", (3, 4)), _x("y", (4, 4))), ValueError, "exceeds"),
        (lambda: L.tril(_x("x", (3,))), ValueError, "rank >= 2"),
        (
            lambda: L.scatter_nd_add(_x("x", (3, 4)), _x("i", (2, 1), "int64"), _x("u", (2, 3))),
            ValueError,
            "Updates shape",
        ),
        (lambda: L.randint(5, 2, shape=[2]), ValueError, "low < high"),
        (lambda: L.randint(5, shape=[0]), ValueError, "shape"),
    ],
)
def test_rearrange_bad_input(fn, exc, match):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), pytest.raises(exc, match=match):
        fn()
