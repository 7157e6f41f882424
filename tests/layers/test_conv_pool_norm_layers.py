"""conv/pool/norm/dropout/resize layers: Fluid's op names, slots, attrs, parameters, and build-time errors."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import ShapeError


@pytest.fixture
def prog():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        yield main, startup


def _ops(main):
    return [op.type for op in main.global_block().ops]


def test_conv2d_builds_fluid_ops_and_parameters(prog):
    main, _ = prog
    x = fluid.data("x", [None, 4, 8, 8])
    y = fluid.layers.conv2d(x, 6, 3, padding=1, groups=2, act="relu")
    assert _ops(main) == ["conv2d", "elementwise_add", "relu"]
    op = main.global_block().ops[0]
    assert op.inputs["Input"] == ["x"] and op.inputs["Filter"] == ["conv2d_0.w_0"]
    assert (
        op.attrs["paddings"] == [1, 1] and op.attrs["groups"] == 2 and op.attrs["strides"] == [1, 1]
    )
    assert main.global_block().var("conv2d_0.w_0").shape == (6, 2, 3, 3)
    assert y.shape == (-1, 6, 8, 8)


@pytest.mark.parametrize(
    "padding,attr,alg,shape",
    [
        ("SAME", [0, 0], "SAME", (-1, 8, 8, 8)),
        ("valid", [0, 0], "VALID", (-1, 8, 6, 6)),
        ([[0, 0], [0, 0], [1, 2], [0, 1]], [1, 2, 0, 1], "EXPLICIT", (-1, 8, 9, 7)),
        ([1, 2, 3, 0], [1, 2, 3, 0], "EXPLICIT", (-1, 8, 9, 9)),
        ([1, 1, 2, 2], [1, 2], "EXPLICIT", (-1, 8, 8, 10)),
    ],
)
def test_conv2d_padding_forms(prog, padding, attr, alg, shape):
    main, _ = prog
    x = fluid.data("x", [None, 4, 8, 8])
    y = fluid.layers.conv2d(x, 8, 3, padding=padding, bias_attr=False)
    op = main.global_block().ops[0]
    assert (op.attrs["paddings"], op.attrs["padding_algorithm"]) == (attr, alg)
    assert y.shape == shape


def test_depthwise_when_cudnn_off(prog):
    main, _ = prog
    x = fluid.data("x", [None, 4, 8, 8])
    fluid.layers.conv2d(x, 8, 3, groups=4, use_cudnn=False)
    fluid.layers.conv2d(x, 8, 3, groups=4)
    assert _ops(main)[0] == "depthwise_conv2d" and _ops(main)[2] == "conv2d"


def test_depthwise_transpose_when_cudnn_off(prog):
    main, _ = prog
    x = fluid.data("x", [None, 4, 8, 8])
    fluid.layers.conv2d_transpose(x, 4, filter_size=3, groups=4, use_cudnn=False)
    fluid.layers.conv2d_transpose(x, 4, filter_size=3, groups=4)
    assert _ops(main) == [
        "depthwise_conv2d_transpose",
        "elementwise_add",
        "conv2d_transpose",
        "elementwise_add",
    ]


def test_conv2d_transpose_sizes(prog):
    x = fluid.data("x", [None, 4, 8, 8])
    assert fluid.layers.conv2d_transpose(x, 3, filter_size=3, stride=2).shape == (-1, 3, 17, 17)
    assert fluid.layers.conv2d_transpose(x, 3, output_size=[16, 16], stride=2).shape == (
        -1,
        3,
        16,
        16,
    )
    assert fluid.layers.conv2d_transpose(x, 3, output_size=18, filter_size=3, stride=2).shape == (
        -1,
        3,
        18,
        18,
    )


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda x: fluid.layers.conv2d(x, 6, 3, groups=3), "divisible by groups"),
        (lambda x: fluid.layers.conv2d(x, 5, 3, groups=2), "num_filters=5"),
        (lambda x: fluid.layers.conv2d(x, 6, 9), "does not fit"),
        (lambda x: fluid.layers.conv2d(x, 6, 3, padding="FULL"), "SAME"),
        (lambda x: fluid.layers.conv2d(x, 6, 3, stride=0), "stride"),
        (lambda x: fluid.layers.conv2d(x, 6, [3, 3, 3]), "filter_size"),
        (lambda x: fluid.layers.conv2d(x, 6, 3, use_cudnn="yes"), "use_cudnn"),
        (lambda x: fluid.layers.pool2d(x, 9, pool_stride=1), "larger than the padded input"),
        (lambda x: fluid.layers.pool2d(x), "pool_size"),
        (lambda x: fluid.layers.pool2d(x, 2, "sum"), "pool_type"),
        (lambda x: fluid.layers.pool2d(x, 2, pool_padding="VALID", ceil_mode=True), "ceil_mode"),
        (lambda x: fluid.layers.adaptive_pool2d(x, 0), "pool_size"),
        (lambda x: fluid.layers.adaptive_pool2d(x, 2, "avg", require_index=True), "require_index"),
        (lambda x: fluid.layers.conv2d_transpose(x, 3), "filter_size or output_size"),
        (
            lambda x: fluid.layers.conv2d_transpose(x, 3, output_size=40, filter_size=3, stride=2),
            "output_size",
        ),
        (lambda x: fluid.layers.batch_norm(x, data_layout="NCDHW"), "data_layout"),
        (lambda x: fluid.layers.layer_norm(x, begin_norm_axis=4), "begin_norm_axis"),
        (lambda x: fluid.layers.dropout(x, 1.2), "dropout_prob"),
        (lambda x: fluid.layers.lrn(x, n=4), "odd"),
        (
            lambda x: fluid.layers.dropout(x, 0.5, dropout_implementation="scale"),
            "dropout_implementation",
        ),
        (lambda x: fluid.layers.image_resize(x), "out_shape"),
        (lambda x: fluid.layers.image_resize(x, [4, 4], resample="CUBIC"), "resample"),
        (lambda x: fluid.layers.resize_bilinear(x, [4, 4, 4]), "2 elements"),
    ],
)
def test_bad_arguments_refused_at_build_time(prog, call, match):
    x = fluid.data("x", [None, 4, 8, 8])
    with pytest.raises((ValueError, TypeError), match=match):
        call(x)


def test_conv_filter_channels_mismatch_in_op(prog):
    main, _ = prog
    x = fluid.data("x", [None, 4, 8, 8])
    w = fluid.layers.create_parameter([6, 3, 3, 3], "float32", name="w")
    out = main.global_block().create_var(name="o")
    with pytest.raises(ShapeError, match="Filter needs 4 input channels"):
        main.global_block().append_op(
            "conv2d", {"Input": [x], "Filter": [w]}, {"Output": [out]}, {}
        )


def test_rank_errors(prog):
    x = fluid.data("x", [None, 8])
    with pytest.raises(ShapeError, match="4-D"):
        fluid.layers.conv2d(x, 2, 3)
    with pytest.raises(ShapeError, match="4-D"):
        fluid.layers.pool2d(x, 2)


def test_pool_and_adaptive_pool_attrs(prog):
    main, _ = prog
    x = fluid.data("x", [None, 4, 8, 8])
    assert fluid.layers.pool2d(x, global_pooling=True).shape == (-1, 4, 1, 1)
    assert fluid.layers.pool2d(x, 3, pool_stride=2, pool_padding=1, ceil_mode=True).shape == (
        -1,
        4,
        5,
        5,
    )
    out, mask = fluid.layers.adaptive_pool2d(x, [3, 3], require_index=True)
    assert mask.dtype == "int32" and out.shape == (-1, 4, 3, 3)
    ops = main.global_block().ops
    assert ops[0].attrs["ksize"] == [-1, -1] and ops[1].attrs["exclusive"] is True
    assert ops[2].type == "max_pool2d_with_index"


def test_batch_norm_parameters_and_clone_for_test(prog):
    main, startup = prog
    x = fluid.data("x", [None, 3, 4, 4])
    y = fluid.layers.batch_norm(x, act="relu")
    h = fluid.layers.dropout(y, 0.5)
    loss = fluid.layers.mean(h)
    test_prog = main.clone(for_test=True)
    fluid.optimizer.SGD(0.1).minimize(loss)
    bn = main.global_block().ops[0]
    assert bn.type == "batch_norm"
    assert bn.inputs["Mean"] == bn.outputs["MeanOut"] == ["batch_norm_0.w_1"]
    assert bn.inputs["Variance"] == bn.outputs["VarianceOut"] == ["batch_norm_0.w_2"]
    mean = main.global_block().var("batch_norm_0.w_1")
    assert mean.persistable and mean.stop_gradient
    sgd_params = [op.inputs["Param"][0] for op in main.global_block().ops if op.type == "sgd"]
    assert sorted(sgd_params) == ["batch_norm_0.b_0", "batch_norm_0.w_0"]
    assert all(
        op.attrs["is_test"]
        for op in test_prog.global_block().ops
        if op.type in ("batch_norm", "dropout")
    )

    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    xv = np.random.default_rng(0).normal(2.0, 3.0, (16, 3, 4, 4)).astype("float32")
    exe.run(main, feed={"x": xv}, fetch_list=[loss], scope=scope)
    moving = np.asarray(scope.find_var("batch_norm_0.w_1").value)
    np.testing.assert_allclose(moving, 0.1 * xv.mean(axis=(0, 2, 3)), rtol=1e-4)
    # inference uses the moving statistics and leaves them alone
    exe.run(
        test_prog, feed={"x": xv}, fetch_list=[test_prog.global_block().var(y.name)], scope=scope
    )
    np.testing.assert_allclose(np.asarray(scope.find_var("batch_norm_0.w_1").value), moving)


def test_layer_norm_and_lrn_and_resize_shapes(prog):
    main, _ = prog
    x = fluid.data("x", [None, 4, 8, 8])
    ln = fluid.layers.layer_norm(x, begin_norm_axis=2)
    assert main.global_block().var("layer_norm_0.w_0").shape == (64,)
    assert ln.shape == (-1, 4, 8, 8)
    assert fluid.layers.lrn(x).shape == (-1, 4, 8, 8)
    assert fluid.layers.resize_bilinear(x, out_shape=[16, 12]).shape == (-1, 4, 16, 12)
    assert fluid.layers.resize_nearest(x, scale=0.5).shape == (-1, 4, 4, 4)
    assert fluid.layers.image_resize(x, [3, 5], resample="NEAREST").shape == (-1, 4, 3, 5)


def test_dropout_seed_from_program_random_seed(prog):
    main, _ = prog
    main.random_seed = 33
    x = fluid.data("x", [None, 4])
    fluid.layers.dropout(x, 0.3)
    op = main.global_block().ops[0]
    assert op.attrs["fix_seed"] and op.attrs["seed"] == 33


def test_resize_sizes_from_variables(prog):
    main, startup = prog
    x = fluid.data("x", [2, 3, 4, 6])
    size = fluid.data("size", [2], "int32")
    scale = fluid.data("scale", [1], "float32")
    h = fluid.layers.fill_constant([1], "int32", 5)
    by_tensor = fluid.layers.resize_bilinear(x, out_shape=size)
    by_list = fluid.layers.resize_nearest(x, out_shape=[h, 9])
    by_scale = fluid.layers.resize_bilinear(x, scale=scale)
    actual = fluid.layers.resize_nearest(x, out_shape=[1, 1], actual_shape=size)
    assert by_tensor.shape == (2, 3, -1, -1)
    ops = [op for op in main.global_block().ops if op.type.endswith("_interp")]
    assert [sorted(k for k, v in op.inputs.items() if v) for op in ops] == [
        ["OutSize", "X"],
        ["SizeTensor", "X"],
        ["Scale", "X"],
        ["OutSize", "X"],
    ]
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    xv = np.random.default_rng(0).random((2, 3, 4, 6)).astype("float32")
    outs = exe.run(
        main,
        feed={"x": xv, "size": np.array([7, 3], "int32"), "scale": np.array([0.5], "float32")},
        fetch_list=[by_tensor, by_list, by_scale, actual],
        scope=scope,
    )
    assert [o.shape for o in outs] == [(2, 3, 7, 3), (2, 3, 5, 9), (2, 3, 2, 3), (2, 3, 7, 3)]
