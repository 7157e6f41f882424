"""append_backward and fluid.gradients: summed gradients, stop_gradient, no_grad_set."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid


def run(main, fetch, feed):
    return fluid.Executor(fluid.CPUPlace()).run(
        main, feed=feed, fetch_list=fetch, scope=fluid.Scope()
    )


XV = np.array([[1.0, -2.0, 3.0]], "float32")


def _data(name="x"):
    x = fluid.layers.data(name, shape=[3], dtype="float32")
    x.stop_gradient = False
    return x


def test_a_variable_used_twice_gets_the_sum_of_its_gradients():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = _data()
        y = fluid.layers.elementwise_mul(x, x)  # x used twice by one op
        z = fluid.layers.elementwise_add(y, fluid.layers.scale(x, scale=3.0))  # and once more
        loss = fluid.layers.mean(z)
        (gx,) = fluid.gradients([loss], [x])
    types = [op.type for op in main.global_block().ops]
    assert "sum" in types  # the pieces are summed
    (g,) = run(main, [gx], {"x": XV})
    np.testing.assert_allclose(g, (2 * XV + 3) / XV.size, rtol=1e-6)


def test_append_backward_returns_params_and_grads():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        y = fluid.layers.fc(x, 2)
        loss = fluid.layers.mean(y)
        pg = fluid.backward.append_backward(loss)
    assert [(p.name, g.name) for p, g in pg] == [
        ("fc_0.w_0", "fc_0.w_0@GRAD"),
        ("fc_0.b_0", "fc_0.b_0@GRAD"),
    ]
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    gw, gb = exe.run(main, feed={"x": XV}, fetch_list=[g for _, g in pg], scope=scope)
    np.testing.assert_allclose(gw, np.repeat(XV.T / 2, 2, axis=1), rtol=1e-6)
    np.testing.assert_allclose(gb, [0.5, 0.5])


def test_parameter_list_restricts_the_result():
    with fluid.program_guard(fluid.Program(), fluid.Program()), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        loss = fluid.layers.mean(fluid.layers.fc(x, 2))
        pg = fluid.backward.append_backward(loss, parameter_list=["fc_0.b_0"])
    assert [p.name for p, _ in pg] == ["fc_0.b_0"]


def test_stop_gradient_blocks_the_gradient():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = _data()
        a = fluid.layers.scale(x, scale=2.0)
        a.stop_gradient = True
        b = fluid.layers.scale(x, scale=5.0)
        loss = fluid.layers.mean(fluid.layers.elementwise_add(a, b))
        (gx,) = fluid.gradients([loss], [x])
    assert not any(
        op.type == "scale" and op.input("X") == [a.name + "@GRAD"] for op in main.global_block().ops
    )
    (g,) = run(main, [gx], {"x": XV})
    np.testing.assert_allclose(g, np.full((1, 3), 5.0 / 3), rtol=1e-6)


def test_no_grad_set():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        h = fluid.layers.fc(x, 2)
        loss = fluid.layers.mean(fluid.layers.fc(h, 1))
        pg = fluid.backward.append_backward(loss, no_grad_set={"fc_0.w_0"})
    names = [p.name for p, _ in pg]
    assert "fc_0.w_0" not in names and "fc_1.w_0" in names
    assert not main.global_block().has_var("fc_0.w_0@GRAD")


def test_data_layers_get_no_gradient_by_default():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        assert x.stop_gradient is True
        (gx,) = fluid.gradients([fluid.layers.mean(fluid.layers.scale(x, 2.0))], [x])
    # asked for explicitly, the input is a leaf of the gradient
    (g,) = run(main, [gx], {"x": XV})
    np.testing.assert_allclose(g, np.full((1, 3), 2.0 / 3), rtol=1e-6)


def test_gradients_of_several_targets_and_unrelated_inputs():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = _data("x")
        other = _data("other")
        t1 = fluid.layers.mean(fluid.layers.scale(x, 2.0))
        t2 = fluid.layers.mean(fluid.layers.scale(x, 4.0))
        gx, gother = fluid.gradients([t1, t2], [x, other])
    assert gother is None
    (g,) = run(main, [gx], {"x": XV, "other": XV})
    np.testing.assert_allclose(g, np.full((1, 3), 6.0 / 3), rtol=1e-6)


def test_gradients_with_target_gradients():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = _data()
        y = fluid.layers.scale(x, 3.0)
        dy = fluid.layers.data("dy", shape=[3], dtype="float32")
        (gx,) = fluid.gradients([y], [x], target_gradients=[dy])
        with pytest.raises(ValueError, match="2 target_gradients given for 1 targets"):
            fluid.gradients([y], [x], target_gradients=[dy, dy])
    (g,) = run(main, [gx], {"x": XV, "dy": np.array([[1, 2, 3]], "float32")})
    np.testing.assert_allclose(g, [[3, 6, 9]])


def test_op_without_gradient_on_the_path_is_a_clear_error():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = _data()
        s = fluid.layers.sign(x)
        loss = fluid.layers.mean(s)
        with pytest.raises(Exception, match="op 'sign' has no gradient") as info:
            fluid.gradients([loss], [x])
    assert "test_backward.py" in str(info.value)


def test_append_backward_needs_a_variable():
    with pytest.raises(TypeError, match="loss must be a Variable"):
        fluid.backward.append_backward("loss")


def test_two_gradients_calls_do_not_overwrite_each_other():
    """A second backward pass names its gradients apart from the first (Fluid uses a prefix)."""
    import numpy as np
    from oar import fluid

    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [1], append_batch_size=False)
        x.stop_gradient = False
        (g1,) = fluid.gradients(fluid.layers.scale(x, 2.0), x)
        (g2,) = fluid.gradients(fluid.layers.scale(x, 5.0), x)
    assert g1.name != g2.name
    got = fluid.Executor(fluid.CPUPlace()).run(
        main, feed={"x": np.ones(1, "float32")}, fetch_list=[g1, g2]
    )
    np.testing.assert_allclose(got[0], [2.0])
    np.testing.assert_allclose(got[1], [5.0])
