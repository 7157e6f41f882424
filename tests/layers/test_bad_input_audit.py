"""Regression tests from the bad-input audit (tools/probe_bad_input.py).

Each case gives a layer plausible-but-wrong input and checks the exception
type, the key words of the message (layer/op, argument, expected, given) and
that the message names the user's line (this file).
"""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.errors import DtypeError, OpRuntimeError, ShapeError

L = fluid.layers
N = fluid.nets
DN = fluid.dygraph
THIS = "test_bad_input_audit.py"


def _check(msg: str, words: list) -> None:
    """``words`` in the message proper (not just in the quoted source line), and the user's line."""
    body = msg.split("\n  called at ")[0].split("\n  created at ")[0]
    for w in words:
        assert w in body, (w, msg)
    assert THIS in msg, msg


def x(shape=(2, 3), dtype="float32", name="x"):
    return fluid.data(name, list(shape), dtype=dtype)


A = np.ones((2, 3), "float32")

# (id, build fn, exception type, words the message must hold)
STATIC = [
    (
        "shape-is-the-layer",
        lambda: L.shape(A),
        TypeError,
        ["shape", "input", "Variable", "ndarray"],
    ),
    (
        "fc-int-input",
        lambda: L.fc(x(dtype="int64"), 4),
        DtypeError,
        ["fc", "input 'x'", "float32", "int64"],
    ),
    (
        "mean-int-input",
        lambda: L.mean(x(dtype="int64")),
        DtypeError,
        ["mean", "x 'x'", "float32", "int64"],
    ),
    (
        "reshape-minus-two",
        lambda: L.reshape(x(), [-2, 3]),
        ShapeError,
        ["reshape2", "-2", "dim 0", "-1"],
    ),
    (
        "pow-factor-str",
        lambda: L.pow(x(), factor="a"),
        TypeError,
        ["pow", "factor", "float", "'a'"],
    ),
    (
        "assign-ragged-list",
        lambda: L.assign([[1, 2], [3]]),
        TypeError,
        ["assign", "input", "ragged list"],
    ),
    ("assign-object-list", lambda: L.assign([object()]), TypeError, ["assign", "input", "object"]),
    (
        "cast-unknown-dtype",
        lambda: L.cast(x(), "floaty"),
        TypeError,
        ["cast:", "floaty", "float32"],
    ),
    (
        "fill_constant-unknown-dtype",
        lambda: L.fill_constant([2], "floaty", 1.0),
        TypeError,
        ["fill_constant:", "floaty"],
    ),
    ("ones-unknown-dtype", lambda: L.ones([2], "floaty"), TypeError, ["ones:", "floaty"]),
    (
        "glu-dim-out-of-range",
        lambda: N.glu(x((2, 4)), dim=4),
        ShapeError,
        ["glu", "dim", "[-2, 2)", "4"],
    ),
    ("glu-odd-dim", lambda: N.glu(x((2, 3))), ShapeError, ["glu", "even", "given 3"]),
    (
        "img_conv_group-lengths",
        lambda: N.img_conv_group(
            x((2, 3, 8, 8)), conv_num_filter=[4, 4], pool_size=2, conv_padding=[1, 1, 1]
        ),
        ValueError,
        ["img_conv_group", "conv_padding", "3 entries", "2"],
    ),
    (
        "sdpa-hidden-mismatch",
        lambda: N.scaled_dot_product_attention(
            x((2, 3, 4), name="q"), x((2, 3, 5), name="k"), x((2, 3, 5), name="v")
        ),
        ShapeError,
        ["scaled_dot_product_attention", "queries (4)", "keys (5)"],
    ),
    (
        "simple_img_conv_pool-rank",
        lambda: N.simple_img_conv_pool(x((2, 3, 8)), 4, 3, 2, 2),
        ValueError,
        ["conv2d", "input"],
    ),
    ("topk-k-float", lambda: L.topk(x(), 1.5), TypeError, ["topk", "k", "float", "1.5"]),
    (
        "reshape-float-entry",
        lambda: L.reshape(x(), [3.0, 2]),
        TypeError,
        ["reshape", "shape", "[3.0, 2]"],
    ),
    (
        "argsort-descending-str",
        lambda: L.argsort(x(), descending="yes"),
        TypeError,
        ["argsort", "descending", "bool", "'yes'"],
    ),
    (
        "leaky_relu-alpha-str",
        lambda: L.leaky_relu(x(), alpha="a"),
        ValueError,
        ["leaky_relu", "argument 'alpha'", "number", "'a'"],
    ),
    (
        "fill_constant-value-str",
        lambda: L.fill_constant([2], "float32", "a"),
        ValueError,
        ["fill_constant", "argument 'value'", "'a'"],
    ),
    (
        "pad-value-str",
        lambda: L.pad(x(), [1, 1, 1, 1], pad_value="a"),
        ValueError,
        ["pad", "argument 'pad_value'", "'a'"],
    ),
    (
        "sign-int",
        lambda: L.sign(x(dtype="int64")),
        TypeError,
        ["sign", "x 'x'", "float32", "int64"],
    ),
    (
        "fluid.embedding-float-ids",
        lambda: fluid.embedding(x((4, 1)), size=[10, 3]),
        TypeError,
        ["embedding", "int64", "float32"],
    ),
    (
        "fluid.embedding-size",
        lambda: fluid.embedding(x((4, 1), "int64"), size=10),
        ValueError,
        ["embedding", "size", "10"],
    ),
    # already right before the audit; kept so they stay right
    (
        "conv2d-groups",
        lambda: L.conv2d(x((2, 3, 8, 8)), 4, 3, groups=2),
        ShapeError,
        ["conv2d", "3 channels", "groups=2"],
    ),
    (
        "concat-dims",
        lambda: L.concat([x((2, 3)), x((4, 5), name="y")], axis=0),
        ShapeError,
        ["op 'concat'", "[4, 5]", "[2, 3]", "dim 1"],
    ),
    (
        "matmul-inner",
        lambda: L.matmul(x((2, 3)), x((4, 5), name="y")),
        ShapeError,
        ["matmul", "x", "y"],
    ),
    (
        "pool2d-type",
        lambda: L.pool2d(x((2, 3, 8, 8)), 2, pool_type="min"),
        ValueError,
        ["pool2d", "pool_type", "min"],
    ),
    (
        "embedding-float-ids",
        lambda: L.embedding(x((4, 1)), size=[10, 3]),
        TypeError,
        ["embedding", "input 'x'", "int64", "float32"],
    ),
]


@pytest.mark.parametrize("cid,build,exc_type,words", STATIC, ids=[c[0] for c in STATIC])
def test_static_bad_input(cid, build, exc_type, words):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        with pytest.raises(exc_type) as info:
            build()
    _check(str(info.value), words)


def _f(*shape):
    return np.ones(shape, "float32")


def _i(*shape):
    return np.zeros(shape, "int64")


# shapes only known at run time (-1 dims): the kernel's error names the op, what it wanted and got
RUNTIME = [
    (
        "top_k-k-too-big",
        lambda: L.topk(x((-1, -1)), k=5)[0],
        {"x": _f(2, 3)},
        ["top_k", "k=5", "[1, 3]"],
    ),
    (
        "cross_entropy-rows",
        lambda: L.cross_entropy(x((-1, 5)), x((-1, 1), "int64", name="l")),
        {"x": _f(4, 5), "l": _i(3, 1)},
        ["cross_entropy", "[3, 1]", "[4, 1]"],
    ),
    (
        "swce-rows",
        lambda: L.softmax_with_cross_entropy(x((-1, 5)), x((-1, 1), "int64", name="l")),
        {"x": _f(4, 5), "l": _i(3, 1)},
        ["softmax_with_cross_entropy", "[3, 1]", "[4, 5]", "must match"],
    ),
    (
        "accuracy-rows",
        lambda: L.accuracy(x((-1, 5)), x((-1, 1), "int64", name="l")),
        {"x": _f(4, 5), "l": _i(3, 1)},
        ["accuracy", "[3, 1]", "4 rows"],
    ),
    (
        "conv2d-input-too-small",
        lambda: L.conv2d(x((-1, 3, -1, -1)), 4, 3),
        {"x": _f(1, 3, 2, 2)},
        ["conv2d", "3x3", "2x2", "0x0"],
    ),
    (
        "matmul-inner",
        lambda: L.matmul(x((-1, -1)), x((-1, -1), name="y")),
        {"x": _f(2, 3), "y": _f(4, 5)},
        ["matmul", "[2, 3]", "[4, 5]", "last dim 3", "dim 4"],
    ),
    (
        "matmul-batch",
        lambda: L.matmul(x((-1, -1, -1)), x((-1, -1, -1), name="y")),
        {"x": _f(2, 2, 3), "y": _f(3, 3, 5)},
        ["matmul", "batch dims [2] and [3]"],
    ),
    (
        "mul-inner",
        lambda: L.mul(x((-1, -1)), x((-1, 5), name="y")),
        {"x": _f(2, 3), "y": _f(4, 5)},
        ["mul", "x_num_col_dims=1", "3 columns vs 4 rows"],
    ),
    (
        "concat-dims",
        lambda: L.concat([x((-1, -1)), x((-1, -1), name="y")], axis=0),
        {"x": _f(2, 3), "y": _f(2, 4)},
        ["concat", "[[2, 3], [2, 4]]", "axis 0"],
    ),
    (
        "stack-shapes",
        lambda: L.stack([x((-1, 3)), x((-1, 3), name="y")]),
        {"x": _f(4, 3), "y": _f(3, 3)},
        ["stack", "same shape", "[[4, 3], [3, 3]]"],
    ),
    (
        "sums-no-silent-broadcast",
        lambda: L.sums([x((-1, 3)), x((-1, 3), name="y")]),
        {"x": _f(4, 3), "y": _f(1, 3)},
        ["sum", "X[1]", "[1, 3]", "[4, 3]", "nothing is broadcast"],
    ),
    (
        "elementwise_add-batch",
        lambda: L.elementwise_add(x((-1, 3)), x((-1, 3), name="y")),
        {"x": _f(4, 3), "y": _f(2, 3)},
        ["elementwise_add", "[4, 3]", "[2, 3]", "do not broadcast"],
    ),
    (
        "elementwise_div-batch",
        lambda: L.elementwise_div(x((-1, 3)), x((-1, 3), name="y")),
        {"x": _f(4, 3), "y": _f(2, 3)},
        ["elementwise_div", "[4, 3]", "[2, 3]", "do not broadcast"],
    ),
    (
        "cos_sim-rows",
        lambda: L.cos_sim(x((-1, 3)), x((-1, 3), name="y")),
        {"x": _f(4, 3), "y": _f(3, 3)},
        ["cos_sim", "[3, 3]", "[4, 3]", "single row"],
    ),
    (
        "label_smooth-prior",
        lambda: L.label_smooth(x((-1, 3)), prior_dist=x((1, -1), name="p")),
        {"x": _f(2, 3), "p": _f(1, 4)},
        ["label_smooth", "PriorDist", "[1, 4]", "(3)"],
    ),
    (
        "pool2d-input-too-small",
        lambda: L.pool2d(x((-1, 3, -1, -1)), 3),
        {"x": _f(1, 3, 1, 1)},
        ["pool2d", "[3, 3]", "1x1"],
    ),
]


@pytest.mark.parametrize("cid,build,feed,words", RUNTIME, ids=[c[0] for c in RUNTIME])
def test_runtime_bad_input(cid, build, feed, words):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        out = build()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    with pytest.raises(OpRuntimeError) as info:
        exe.run(main, feed=feed, fetch_list=[out])
    _check(str(info.value), words)


def test_layers_shape_is_the_function_not_the_module():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        s = L.shape(x((2, 3)))
    assert s.dtype in ("int32", "int64") and list(s.shape) == [2]


def tv(a):
    return DN.to_variable(np.asarray(a))


F = "float32"
DYGRAPH = [
    (
        "Linear-dtype",
        lambda: DN.Linear(4, 2)(tv(np.ones((3, 4)))),
        TypeError,
        ["Linear", "input", "float32", "float64"],
    ),
    (
        "Linear-dim",
        lambda: DN.Linear(4, 2)(tv(np.ones((3, 5), F))),
        ValueError,
        ["Linear", "[3, 5]", "4"],
    ),
    (
        "Conv2DTranspose-channels",
        lambda: DN.Conv2DTranspose(3, 4, 3)(tv(np.ones((1, 2, 8, 8), F))),
        ValueError,
        ["Conv2DTranspose", "3 channels", "[1, 2, 8, 8]"],
    ),
    (
        "Conv3D-channels",
        lambda: DN.Conv3D(3, 4, 3)(tv(np.ones((1, 2, 4, 4, 4), F))),
        ValueError,
        ["Conv3D", "NCDHW", "3 channels", "[1, 2, 4, 4, 4]"],
    ),
    (
        "Conv3DTranspose-groups",
        lambda: DN.Conv3DTranspose(3, 4, 3, groups=2),
        ValueError,
        ["Conv3DTranspose", "groups=2"],
    ),
    (
        "Pool2D-rank",
        lambda: DN.Pool2D(2)(tv(np.ones((3, 8), F))),
        ValueError,
        ["Pool2D", "4-D", "[3, 8]"],
    ),
    (
        "BatchNorm-channels",
        lambda: DN.BatchNorm(3)(tv(np.ones((2, 4, 2, 2), F))),
        ValueError,
        ["BatchNorm", "3 channels", "[2, 4, 2, 2]"],
    ),
    (
        "BatchNorm-layout",
        lambda: DN.BatchNorm(3, data_layout="NWHC"),
        ValueError,
        ["BatchNorm", "data_layout", "NWHC"],
    ),
    (
        "Embedding-float-ids",
        lambda: DN.Embedding([10, 3])(tv(np.ones((2, 1), F))),
        TypeError,
        ["Embedding", "int64", "float32"],
    ),
    (
        "GRUUnit-size",
        lambda: DN.GRUUnit(6)(tv(np.ones((2, 5), F)), tv(np.ones((2, 2), F))),
        ValueError,
        ["GRUUnit", "[batch, 6]", "[2, 5]"],
    ),
    (
        "PRelu-channel",
        lambda: DN.PRelu(mode="channel", channel=3)(tv(np.ones((2, 4, 2, 2), F))),
        ValueError,
        ["PRelu", "channel=3", "[2, 4, 2, 2]"],
    ),
    ("Dropout-p", lambda: DN.Dropout(p=1.5), ValueError, ["Dropout", "p", "1.5"]),
    (
        "Conv2D-filter-too-big",
        lambda: DN.Conv2D(3, 4, 11)(tv(np.ones((1, 3, 8, 8), F))),
        ShapeError,
        ["op 'conv2d'", "11x11", "8x8", "Input="],
    ),
    (
        "Sequential-non-layer",
        lambda: DN.Sequential(DN.Linear(2, 2), 3),
        TypeError,
        ["Sequential", "must be a Layer", "int"],
    ),
    (
        "BatchNorm-int-input",
        lambda: DN.BatchNorm(3)(tv(np.ones((2, 3, 2, 2), "int64"))),
        DtypeError,
        ["op 'batch_norm'", "'X'", "float", "int64"],
    ),
    # Fluid 1.8 builds Pool2D(-2) and Conv2DTranspose(groups=2 over 3 channels) and runs them to
    # garbage; oar builds them too and explains the failure when they run
    (
        "Pool2D-negative-size-run",
        # the shared pool2d_attrs refuses it in the constructor, as layers.pool2d does
        lambda: DN.Pool2D(-2)(tv(np.ones((1, 3, 4, 4), F))),
        ValueError,
        ["Pool2D", "pool_size", "[-2, -2]"],
    ),
    (
        "Conv2DTranspose-groups-run",
        # the shared conv2d_transpose_spec refuses it in the constructor, as layers.conv2d_transpose
        lambda: DN.Conv2DTranspose(3, 4, 3, groups=2)(tv(np.ones((1, 3, 4, 4), F))),
        ShapeError,
        ["Conv2DTranspose", "3 channels", "groups=2"],
    ),
    # mixed dtypes: Fluid 1.8 rejects them in dygraph; numpy would upcast silently
    (
        "elementwise_add-mixed-dtype",
        lambda: L.elementwise_add(tv(np.ones((2, 3), F)), tv(np.ones((2, 3)))),
        DtypeError,
        ["elementwise_add", "same dtype", "x float32", "y float64"],
    ),
    (
        "matmul-mixed-dtype",
        lambda: L.matmul(tv(np.ones((2, 3), F)), tv(np.ones((3, 2)))),
        DtypeError,
        ["matmul", "x float32", "y float64"],
    ),
    (
        "concat-mixed-dtype",
        lambda: L.concat([tv(np.ones((2, 3), F)), tv(np.ones((2, 3)))]),
        DtypeError,
        ["concat", "input[0] float32", "input[1] float64"],
    ),
    (
        "operator-plus-mixed-dtype",
        lambda: tv(np.ones((2, 3), F)) + tv(np.ones((2, 3), "int64")),
        DtypeError,
        ["elementwise_add", "float32 and int64", "nothing is cast"],
    ),
    # eager kernel failures inside a layer function are explained by the op's infer_shape
    (
        "reshape-numel-eager",
        lambda: L.reshape(tv(np.ones((2, 3), F)), [4, 2]),
        ShapeError,
        ["op 'reshape2'", "[2, 3]", "[4, 2]"],
    ),
    (
        "softmax-axis-eager",
        lambda: L.softmax(tv(np.ones((2, 3), F)), axis=5),
        ShapeError,
        ["op 'softmax'", "axis 5", "rank 2"],
    ),
    (
        "elementwise_add-shape-eager",
        lambda: L.elementwise_add(tv(np.ones((2, 3), F)), tv(np.ones((4, 5), F))),
        ShapeError,
        ["op 'elementwise_add'", "[2, 3]", "[4, 5]"],
    ),
    # a kernel error that infer_shape cannot explain still names the op and the user's line
    (
        "lookup-id-out-of-range-eager",
        lambda: L.embedding(tv(np.array([[12]], "int64")), size=[10, 3]),
        OpRuntimeError,
        ["lookup_table", "[12]", "[0, 10)"],
    ),
    (
        "operator-plus-shape",
        lambda: tv(np.ones((2, 3), F)) + tv(np.ones((4, 5), F)),
        ShapeError,
        ["op 'elementwise_add'", "[2, 3]", "[4, 5]"],
    ),
    (
        "Conv2D-negative-channels",
        lambda: DN.Conv2D(-3, 4, 3),
        ValueError,
        ["Conv2D", "num_channels", "-3"],
    ),
    (
        "Embedding-negative-vocab",
        lambda: DN.Embedding([-10, 3]),
        ValueError,
        ["Embedding", "vocab_size", "-10"],
    ),
    (
        "BatchNorm-negative-channels",
        lambda: DN.BatchNorm(-3),
        ValueError,
        ["BatchNorm", "num_channels", "-3"],
    ),
    (
        "to_variable-ragged-list",
        lambda: DN.to_variable([[1, 2], [3]]),
        TypeError,
        ["to_variable", "rectangular", "ragged list"],
    ),
    (
        "linear_lr_warmup-steps-str",
        lambda: L.linear_lr_warmup(0.1, "a", 0.0, 0.1),
        ValueError,
        ["linear_lr_warmup", "warmup_steps", "'a'"],
    ),
    (
        "Embedding-id-out-of-range",
        lambda: DN.Embedding([10, 3])(tv(np.array([[1], [12]], "int64"))),
        OpRuntimeError,
        ["lookup_table", "[12]", "[0, 10)"],
    ),
    (
        "MSELoss-shapes",
        lambda: DN.MSELoss()(tv(np.ones((2, 3), F)), tv(np.ones((2, 4), F))),
        ValueError,
        ["MSELoss", "[2, 3]", "[2, 4]"],
    ),
    (
        "L1Loss-reduction",
        lambda: DN.L1Loss(reduction="avg"),
        ValueError,
        ["L1Loss", "reduction", "'avg'"],
    ),
]


def test_every_dygraph_layer_names_the_user_line():
    """Every public dygraph Layer's constructor and forward go through the wrapper that adds the
    layer and the user's line to an error (containers' forward only passes sublayers' errors on)."""
    import inspect

    from oar.dygraph.container import LayerList, ParameterList, Sequential
    from oar.dygraph.layers import Layer

    containers = {LayerList, ParameterList, Sequential}
    unwrapped = []
    for name in dir(DN):
        cls = getattr(DN, name)
        if not (inspect.isclass(cls) and issubclass(cls, Layer)) or cls is Layer:
            continue
        meths = ("__init__",) if cls in containers else ("__init__", "forward")
        unwrapped += [
            f"{name}.{m}" for m in meths if not getattr(getattr(cls, m), "__oar_user_line__", False)
        ]
    assert not unwrapped


@pytest.mark.parametrize("cid,build,exc_type,words", DYGRAPH, ids=[c[0] for c in DYGRAPH])
def test_dygraph_bad_input(cid, build, exc_type, words):
    with fluid.dygraph.guard():
        with pytest.raises(exc_type) as info:
            build()
    _check(str(info.value), words)


def test_prefix_does_not_double_name_layers():
    """A message that already names its layer is not prefixed again."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), pytest.raises(ValueError) as info:
        L.fc(x(), 0)
    assert str(info.value).startswith("fc: size must be a positive int")
