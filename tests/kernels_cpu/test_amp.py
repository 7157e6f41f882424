"""Mixed-precision ops (no gradients: they act on gradients) and decorate() training."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

G1 = np.array([[2.0, -4.0]], "float32")
G2 = np.array([8.0], "float32")
SCALE = np.array([2.0], "float32")


def _update_ref(
    found, scale, good, bad, incr_every_n_steps, decr_every_n_nan_or_inf, incr_ratio, decr_ratio
):
    s, g, b = float(scale[0]), int(good[0]), int(bad[0])
    if found[0]:
        g, b = 0, b + 1
        if b >= decr_every_n_nan_or_inf:
            s, b = max(1.0, s * decr_ratio), 0
    else:
        g, b = g + 1, 0
        if g >= incr_every_n_steps:
            s, g = s * incr_ratio, 0
    return {
        "LossScaling": np.array([s], "float32"),
        "OutGoodSteps": np.array([g], "int32"),
        "OutBadSteps": np.array([b], "int32"),
    }


ATTRS = {
    "incr_every_n_steps": 2,
    "decr_every_n_nan_or_inf": 1,
    "incr_ratio": 2.0,
    "decr_ratio": 0.5,
}


def _update_case(found, good, bad, name):
    ins = {
        "FoundInfinite": np.array([found]),
        "PrevLossScaling": np.array([8.0], "float32"),
        "InGoodSteps": np.array([good], "int32"),
        "InBadSteps": np.array([bad], "int32"),
    }
    return OpCase(
        "update_loss_scaling",
        ins,
        ATTRS,
        ref=lambda FoundInfinite, PrevLossScaling, InGoodSteps, InBadSteps, **a: _update_ref(
            FoundInfinite, PrevLossScaling, InGoodSteps, InBadSteps, **a
        ),
        name=name,
    )


CASES = [
    OpCase(
        "check_finite_and_unscale",
        {"X": [G1, G2], "Scale": SCALE},
        ref=lambda X, Scale: {"Out": [x / Scale[0] for x in X], "FoundInfinite": np.array([False])},
        outputs={"Out": 2, "FoundInfinite": 1},
        name="finite",
    ),
    OpCase(
        "check_finite_and_unscale",
        {"X": [G1, np.array([np.inf], "float32")], "Scale": SCALE},
        ref=lambda X, Scale: {
            "Out": [np.zeros_like(x) for x in X],
            "FoundInfinite": np.array([True]),
        },
        outputs={"Out": 2, "FoundInfinite": 1},
        name="overflow",
    ),
    _update_case(False, 0, 0, "one_good_step"),
    _update_case(False, 1, 0, "grow"),
    _update_case(True, 1, 0, "shrink"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_amp_ops(case):
    check_case(case)


def test_decorate_trains_and_the_scale_adapts_after_an_overflow():
    from oar import fluid
    from oar.fluid.contrib import mixed_precision

    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 3
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 3])
        y = fluid.data("y", [None, 1])
        loss = fluid.layers.mean(fluid.layers.square_error_cost(fluid.layers.fc(x, 1), y))
        opt = mixed_precision.decorate(
            fluid.optimizer.SGD(0.1),
            init_loss_scaling=1024.0,
            incr_every_n_steps=3,
            decr_every_n_nan_or_inf=1,
            decr_ratio=0.5,
        )
        opt.minimize(loss)
    scale_var = opt.get_loss_scaling()
    rng = np.random.RandomState(0)
    xs = rng.uniform(-1, 1, (32, 3)).astype("float32")
    ys = xs @ np.array([[1.0], [-1.0], [2.0]], "float32")
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(start)
        w_name = main.global_block().all_parameters()[0].name
        w0 = np.array(scope.find_var(w_name).get_tensor()).copy()
        losses, scales = [], []
        for step in range(40):
            feed_x = xs * 1e20 if step == 0 else xs  # the first step's loss overflows float32
            with np.errstate(over="ignore", invalid="ignore"):
                lv, sv = exe.run(main, feed={"x": feed_x, "y": ys}, fetch_list=[loss, scale_var])
            losses.append(float(lv))
            scales.append(float(sv[0]))
            if len(scales) == 1:  # the overflowing step left the weights alone
                np.testing.assert_array_equal(np.array(scope.find_var(w_name).get_tensor()), w0)
    assert scales[:5] == [512.0, 512.0, 512.0, 1024.0, 1024.0]  # halved, then doubled after 3
    assert not np.isfinite(losses[0])
    assert losses[-1] < 0.05 * losses[1]


def _amp_classifier(amp_lists=None):
    from oar import fluid
    from oar.fluid.contrib import mixed_precision

    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 5
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 8])
        y = fluid.data("y", [None, 1], "int64")
        h = fluid.layers.fc(x, 16, act="relu")
        logits = fluid.layers.fc(h, 3)
        loss = fluid.layers.mean(fluid.layers.softmax_with_cross_entropy(logits, y))
        opt = mixed_precision.decorate(
            fluid.optimizer.SGD(0.5),
            amp_lists=amp_lists,
            init_loss_scaling=2.0**20,  # float16 gradients overflow at this scale
            incr_every_n_steps=4,
            decr_every_n_nan_or_inf=1,
            decr_ratio=0.5,
        )
        opt.minimize(loss)
    return main, start, loss, opt


def test_decorate_computes_white_and_gray_ops_in_float16():
    """The fc layers' mul, bias add and relu run in float16 between casts (parameters stay
    float32 master weights); softmax_with_cross_entropy and mean (black) in float32; the
    scale halves while float16 gradients overflow, then training goes on."""
    from oar import fluid

    main, start, loss, opt = _amp_classifier()
    block = main.global_block()
    dtype_of = {op.type: block.var(op.output_arg_names[0]).dtype for op in block.ops}
    assert dtype_of["mul"] == dtype_of["relu"] == dtype_of["elementwise_add"] == "float16"
    assert dtype_of["softmax_with_cross_entropy"] == dtype_of["mean"] == "float32"
    assert {p.dtype for p in block.all_parameters()} == {"float32"}
    casts = [op for op in block.ops if op.type == "cast" and op.attr("out_dtype") == "float16"]
    assert {op.input("X")[0] for op in casts} >= {"x", *(p.name for p in block.all_parameters())}
    rng = np.random.RandomState(0)
    xs = rng.uniform(-1, 1, (64, 8)).astype("float32")
    ys = xs[:, :3].argmax(1).reshape(-1, 1).astype("int64")
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    losses, scales = [], []
    with fluid.scope_guard(scope):
        exe.run(start)
        for _ in range(30):
            with np.errstate(over="ignore", invalid="ignore"):
                lv, sv = exe.run(main, feed={"x": xs, "y": ys},
                                 fetch_list=[loss, opt.get_loss_scaling()])  # fmt: skip
            losses.append(float(lv))
            scales.append(float(sv[0]))
        fc_w = block.all_parameters()[0].name
        assert np.array(scope.find_var(fc_w).get_tensor()).dtype == np.float32
    assert scales[0] == 2.0**19 and min(scales) < 2.0**19  # halved on overflow
    assert max(scales[-10:]) > min(scales)  # grew again after good steps
    assert losses[-1] < 0.5 * losses[0]


def test_custom_black_list_keeps_an_op_in_float32():
    from oar.fluid.contrib import mixed_precision

    lists = mixed_precision.AutoMixedPrecisionLists(custom_black_list=["mul"])
    main, *_ = _amp_classifier(lists)
    block = main.global_block()
    forward = [op for op in block.ops if op.type in ("mul", "relu", "elementwise_add")]
    assert all(block.var(op.output_arg_names[0]).dtype == "float32" for op in forward[:3])
