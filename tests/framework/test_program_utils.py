"""Program utilities: clone(for_test), to_string, memory_optimize / release_memory."""

import numpy as np
import pytest
from oar import fluid
from oar.plugins import registries


def train_program(extra=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [-1, 4])
        h = fluid.layers.fc(x, 3, act="relu")
        if extra is not None:
            h = extra(h)
        loss = fluid.layers.mean(h)
        lr = fluid.layers.exponential_decay(0.1, 10, 0.5)
        fluid.optimizer.Momentum(lr, 0.9).minimize(loss)
    return main, startup, loss


def test_clone_for_test_drops_backward_optimize_and_schedule_ops():
    main, startup, loss = train_program()
    test = main.clone(for_test=True)
    types = [op.type for op in test.global_block().ops]
    assert types == ["mul", "elementwise_add", "relu", "mean"]
    assert not any(n.endswith("@GRAD") for n in test.global_block().vars)
    assert len(main.global_block().ops) > len(types)  # the original is untouched
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    before = {p.name: np.array(scope.find_var(p.name).value) for p in main.all_parameters()}
    exe.run(test, feed={"x": np.ones((2, 4), "float32")}, fetch_list=[loss.name], scope=scope)
    for name, v in before.items():
        np.testing.assert_array_equal(np.array(scope.find_var(name).value), v)


@pytest.mark.parametrize(
    "op,layer",
    [
        ("dropout", lambda h: fluid.layers.dropout(h, 0.5)),
        ("batch_norm", lambda h: fluid.layers.batch_norm(h)),
    ],
)
def test_clone_for_test_sets_is_test(op, layer):
    if op not in registries().ops:
        pytest.skip(f"op '{op}' is not defined yet (nn-conv helper)")
    main, _, _ = train_program(layer)
    assert not any(o.attr("is_test") for o in main.global_block().ops if o.type == op)
    test = main.clone(for_test=True)
    ops = [o for o in test.global_block().ops if o.type == op]
    assert ops and all(o.attr("is_test") is True for o in ops)


def test_to_string():
    main, _, _ = train_program()
    text = main.to_string(True)
    assert (
        "momentum" in text
        and "@LR_DECAY_COUNTER@" in text
        and main.all_parameters()[0].name in text
    )
    assert "stop_gradient" not in text
    detailed = main.to_string(throw_on_error=False, with_details=True)
    assert "stop_gradient" in detailed and "lod_level" in detailed
    with pytest.raises(TypeError, match="must be bools"):
        main.to_string("yes")
    assert str(main) == main.to_string(True)


def test_memory_optimize_and_release_memory_are_accepted_and_change_nothing():
    main, startup, loss = train_program()
    before = main.to_string(True)
    fluid.memory_optimize(main, skip_opt_set={loss.name}, print_log=False, level=0)
    fluid.release_memory(main)
    assert main.to_string(True) == before
    with pytest.raises(TypeError, match="input_program must be a Program"):
        fluid.memory_optimize("main")
    with pytest.raises(ValueError, match="level must be 0 or 1"):
        fluid.memory_optimize(main, level=3)
