"""Bad input gives a clear error naming the layer/op, the variable and the user's line.

Each test asserts that this file's name appears in the message: the user's
line is what makes an error in a long model script findable.
"""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.errors import (
    DtypeError,
    FeedError,
    FetchError,
    KernelNotFoundError,
    ShapeError,
    UninitializedVariableError,
)

THIS_FILE = "test_errors.py"


def regression():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data(name="x", shape=[4], dtype="float32")
        y = fluid.layers.fc(input=x, size=1)
    return main, startup, x, y


def ready():
    main, startup, x, y = regression()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    return main, exe, scope, y


def test_feeding_an_unknown_name():
    main, exe, scope, y = ready()
    with pytest.raises(FeedError) as info:
        exe.run(
            main,
            feed={"x": np.zeros((1, 4), "float32"), "z": np.zeros(1)},
            fetch_list=[y],
            scope=scope,
        )
    msg = str(info.value)
    assert "'z'" in msg and "data variables are ['x']" in msg
    assert THIS_FILE in msg


def test_feeding_a_wrong_dtype():
    main, exe, scope, y = ready()
    with pytest.raises(FeedError) as info:
        exe.run(main, feed={"x": np.zeros((1, 4), "float64")}, fetch_list=[y], scope=scope)
    msg = str(info.value)
    assert (
        "feed 'x' expects dtype float32" in msg and "float64" in msg and ".astype('float32')" in msg
    )
    assert THIS_FILE in msg


def test_feeding_a_wrong_shape():
    main, exe, scope, y = ready()
    with pytest.raises(FeedError) as info:
        exe.run(main, feed={"x": np.zeros((2, 5), "float32")}, fetch_list=[y], scope=scope)
    msg = str(info.value)
    assert "feed 'x' has shape [2, 5]" in msg and "expects [-1, 4]" in msg
    assert THIS_FILE in msg


def test_fetching_an_unknown_name():
    main, exe, scope, y = ready()
    with pytest.raises(FetchError) as info:
        exe.run(
            main,
            feed={"x": np.zeros((1, 4), "float32")},
            fetch_list=[y, "no_such_var"],
            scope=scope,
        )
    msg = str(info.value)
    assert "cannot fetch 'no_such_var'" in msg and "x" in msg
    assert THIS_FILE in msg


def test_elementwise_add_on_mismatched_shapes_at_build_time():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        a = fluid.layers.data("a", shape=[3], dtype="float32")
        b = fluid.layers.data("b", shape=[4], dtype="float32")
        with pytest.raises(ShapeError) as info:
            fluid.layers.elementwise_add(a, b)  # the line the message must show
    msg = str(info.value)
    assert "op 'elementwise_add'" in msg
    assert "'a' (shape [-1, 3]" in msg and "'b' (shape [-1, 4]" in msg
    assert THIS_FILE in msg and "fluid.layers.elementwise_add(a, b)" in msg


def test_fc_on_inputs_with_different_batch_sizes_at_build_time():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        a = fluid.layers.data("a", shape=[2, 3], dtype="float32", append_batch_size=False)
        b = fluid.layers.data("b", shape=[5, 4], dtype="float32", append_batch_size=False)
        with pytest.raises(ShapeError) as info:
            fluid.layers.fc([a, b], size=2)  # [2, 2] + [5, 2] cannot be summed
    msg = str(info.value)
    assert (
        "layer 'fc'" in msg
        and "op 'sum'" in msg
        and "X[1] has shape [5, 2], X[0] has [2, 2]" in msg
    )
    assert THIS_FILE in msg and "fluid.layers.fc([a, b], size=2)" in msg


def test_fc_with_an_unknown_feature_dim():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        a = fluid.layers.data("a", shape=[-1, -1], dtype="float32")
        with pytest.raises(ShapeError) as info:
            fluid.layers.fc(a, size=2)
    msg = str(info.value)
    assert "fc" in msg and "'a'" in msg and "[-1, -1]" in msg
    assert THIS_FILE in msg


def test_fc_mixing_dtypes():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        a = fluid.layers.data("a", shape=[3], dtype="float32")
        w = fluid.layers.data("w", shape=[3, 2], dtype="float64", append_batch_size=False)
        with pytest.raises(DtypeError) as info:
            fluid.layers.mul(a, w)
    msg = str(info.value)
    assert "op 'mul'" in msg and "float64" in msg and THIS_FILE in msg


def test_unknown_activation():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        a = fluid.layers.data("a", shape=[3], dtype="float32")
        with pytest.raises(ValueError) as info:
            fluid.layers.fc(a, size=2, act="relu7")
    msg = str(info.value)
    assert "fc: unknown activation 'relu7'" in msg and "'relu'" in msg and "'sum'" not in msg
    assert THIS_FILE in msg


def test_running_before_the_startup_program():
    main, startup, x, y = regression()
    exe = fluid.Executor(fluid.CPUPlace())
    with pytest.raises(UninitializedVariableError) as info:
        exe.run(main, feed={"x": np.zeros((1, 4), "float32")}, fetch_list=[y], scope=fluid.Scope())
    msg = str(info.value)
    assert "op 'mul'" in msg and "'fc_0.w_0'" in msg and "run the startup program first" in msg
    assert THIS_FILE in msg


def test_forgetting_a_feed():
    main, exe, scope, y = ready()
    with pytest.raises(UninitializedVariableError) as info:
        exe.run(main, fetch_list=[y], scope=scope)
    msg = str(info.value)
    assert "data variable 'x'" in msg and "was not fed" in msg and THIS_FILE in msg


def test_kernel_missing_for_a_dtype():
    """Core defines the op for any dtype, but the numpy matmul kernel is float-only."""
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        a = fluid.layers.data("a", shape=[2, 2], dtype="int64", append_batch_size=False)
        out = fluid.layers.matmul(a, a)
    with pytest.raises(KernelNotFoundError) as info:
        fluid.Executor(fluid.CPUPlace()).run(
            main, feed={"a": np.eye(2, dtype="int64")}, fetch_list=[out], scope=fluid.Scope()
        )
    msg = str(info.value)
    assert "op 'matmul' has no kernel for device 'cpu' and dtype int64" in msg
    # the cpu plugin is installed: name the dtypes that do have kernels, not a pip command
    assert "it has kernels for: float16, float32, float64" in msg, msg
    assert "pip install" not in msg and THIS_FILE in msg


def test_a_kernel_failure_names_the_op_and_line():
    from oar.errors import OpRuntimeError

    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        label = fluid.layers.data("label", shape=[1], dtype="int64")
        loss = fluid.layers.cross_entropy(x, label)
    with pytest.raises(OpRuntimeError) as info:
        fluid.Executor(fluid.CPUPlace()).run(
            main,
            feed={"x": np.full((1, 3), 1 / 3, "float32"), "label": np.array([[9]], "int64")},
            fetch_list=[loss],
            scope=fluid.Scope(),
        )
    msg = str(info.value)
    assert "op 'cross_entropy' failed on cpu" in msg and "X=x[1, 3]" in msg and THIS_FILE in msg


def test_layer_argument_type_errors_name_the_layer():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        with pytest.raises(TypeError, match="fc"):
            fluid.layers.fc(np.zeros((2, 3)), size=2)
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        with pytest.raises(ValueError, match="fc: size must be a positive int"):
            fluid.layers.fc(x, size=0)


def test_layer_argument_errors_name_the_user_line():
    """Errors a layer raises before any op exists still end with the caller's line."""
    import pytest
    from oar import fluid

    img = fluid.layers.data(name="img", shape=[3, 8, 8], dtype="float32")
    with pytest.raises(ValueError) as info:
        fluid.layers.conv2d(img, num_filters=4, filter_size=3, groups=2)
    assert "test_errors.py" in str(info.value) and "groups=2" in str(info.value)
    with pytest.raises(TypeError) as info:
        fluid.layers.embedding(img, size=[10, 4])
    assert "test_errors.py" in str(info.value)


def test_kernel_failure_lists_the_shapes_of_list_inputs():
    import numpy as np
    import pytest
    from oar import fluid
    from oar.errors import OpRuntimeError

    a = fluid.layers.data("a", [3], append_batch_size=False)
    b = fluid.layers.data("b", [-1], append_batch_size=False)
    s = fluid.layers.sums([a, b])
    with pytest.raises(OpRuntimeError) as info:
        fluid.Executor(fluid.CPUPlace()).run(
            feed={"a": np.ones(3, "float32"), "b": np.ones(4, "float32")}, fetch_list=[s]
        )
    assert "X=[a[3], b[4]]" in str(info.value) and "test_errors.py" in str(info.value)
