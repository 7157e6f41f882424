"""Behaviours checked against Fluid 1.8.5; expected values come from the oracle.

Values were produced by running the same programs on Fluid 1.8.5 (see each test's
docstring); signatures are those ``inspect.signature`` shows there.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from oar import fluid

BUILD = textwrap.dedent(
    """
    import numpy as np
    from oar import fluid

    def build():
        main, start = fluid.Program(), fluid.Program()
        main.random_seed = start.random_seed = 42
        with fluid.program_guard(main, start):
            x = fluid.data("x", [None, 4])
            fluid.layers.fc(x, 3)
            fluid.layers.fc(x, 3)
        scope = fluid.Scope()
        with fluid.scope_guard(scope):
            fluid.Executor(fluid.CPUPlace()).run(start)
            params = main.global_block().all_parameters()
            return [np.array(scope.find_var(p.name).get_tensor()) for p in params]
    """
)


def _build():
    env: dict = {}
    exec(BUILD, env)
    return env["build"]()


def test_random_seed_repeats_initial_parameters_across_builds_and_processes():
    """Fluid 1.8.5: two builds with random_seed=42 give identical parameters."""
    first, second = _build(), _build()
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    # oar keeps two parameters of one shape distinct (Fluid gives both fc weights equal values)
    assert not np.array_equal(first[0], first[2])
    code = BUILD + "\nnp.save(__import__('sys').stdout.buffer, build()[0])\n"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=120, check=True
    )
    import io

    np.testing.assert_array_equal(np.load(io.BytesIO(proc.stdout)), first[0])


def test_global_seed_sets_new_programs_seed():
    """Fluid 1.8.5: p.global_seed(7) -> p.random_seed == 7 and Program().random_seed == 7."""
    p = fluid.Program()
    try:
        p.global_seed(7)
        assert p.random_seed == 7
        assert fluid.Program().random_seed == 7
    finally:
        p.global_seed(0)
    assert fluid.Program().random_seed == 0


def test_huber_loss_is_elementwise_for_any_shape():
    """Fluid 1.8.5: huber_loss(a, 0, 1.0) for a = arange(8).reshape(2, 4) / 2."""
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        a = fluid.data("a", [2, 4])
        b = fluid.data("b", [2, 4])
        h = fluid.layers.huber_loss(a, b, 1.0)
    assert tuple(h.shape) == (2, 4)
    feed = {"a": np.arange(8, dtype="float32").reshape(2, 4) / 2, "b": np.zeros((2, 4), "float32")}
    (got,) = fluid.Executor(fluid.CPUPlace()).run(main, feed=feed, fetch_list=[h])
    np.testing.assert_allclose(got, [[0.0, 0.125, 0.5, 1.0], [1.5, 2.0, 2.5, 3.0]])


def test_uniform_diag_positions_follow_fluid():
    """Fluid 1.8.5, fc weight [4, 5] with Uniform(-0.1, 0.1, 3, diag_num=3, diag_step=2,
    diag_val=7.0): 7.0 at flattened positions 0, 3 and 6 only."""
    main, start = fluid.Program(), fluid.Program()
    init = fluid.initializer.Uniform(-0.1, 0.1, 3, diag_num=3, diag_step=2, diag_val=7.0)
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 4])
        fluid.layers.fc(x, 5, param_attr=fluid.ParamAttr(initializer=init))
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        fluid.Executor(fluid.CPUPlace()).run(start)
        w = np.array(scope.find_var(main.global_block().all_parameters()[0].name).get_tensor())
    flat = w.reshape(-1)
    assert np.flatnonzero(flat == 7.0).tolist() == [0, 3, 6]
    assert (np.abs(np.delete(flat, [0, 3, 6])) <= 0.1).all()


def _params(obj) -> list:
    sig = inspect.signature(obj)
    return [(p.name, p.default) for p in sig.parameters.values() if p.kind != p.KEYWORD_ONLY]


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            fluid.ParamAttr,
            [
                ("name", None),
                ("initializer", None),
                ("learning_rate", 1.0),
                ("regularizer", None),
                ("trainable", True),
                ("do_model_average", True),
            ],
        ),
        (
            fluid.WeightNormParamAttr,
            [
                ("dim", None),
                ("name", None),
                ("initializer", None),
                ("learning_rate", 1.0),
                ("regularizer", None),
                ("trainable", True),
                ("do_model_average", False),
            ],
        ),
        (
            fluid.initializer.Uniform,
            [
                ("low", -1.0),
                ("high", 1.0),
                ("seed", 0),
                ("diag_num", 0),
                ("diag_step", 0),
                ("diag_val", 1.0),
            ],
        ),
        (fluid.unique_name.switch, [("new_generator", None), ("new_para_name_checker", None)]),
    ],
    ids=["ParamAttr", "WeightNormParamAttr", "Uniform", "unique_name.switch"],
)
def test_positional_order_and_defaults_are_fluid18s(obj, expected):
    assert _params(obj) == expected


def test_param_attr_positional_do_model_average():
    attr = fluid.ParamAttr("w", None, 0.5, None, False, False)
    assert (attr.name, attr.learning_rate, attr.trainable, attr.do_model_average) == (
        "w",
        0.5,
        False,
        False,
    )
    wn = fluid.WeightNormParamAttr(0, "v")
    assert (wn.dim, wn.name, wn.do_model_average) == (0, "v", False)


def test_unique_name_switch_returns_generator_and_checker():
    """Fluid 1.8.5: switch() returns (UniqueNameGenerator, DygraphParameterNameChecker)."""
    old = fluid.unique_name.switch()
    try:
        assert len(old) == 2
        assert fluid.unique_name.generate("zz") == "zz_0"
    finally:
        fluid.unique_name.switch(*old)
    assert fluid.unique_name.generate("fidelity_probe").startswith("fidelity_probe_")


def test_variable_grad_name_and_program_parse_from_string():
    """Fluid 1.8.5: fluid.data('xx', ...).grad_name == 'xx@GRAD'."""
    main = fluid.Program()
    main.random_seed = 7
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.data("xx", [None, 3])
        fluid.layers.fc(x, 2)
    assert x.grad_name == "xx@GRAD"
    from oar.plugins import registries

    fmt = registries().formats.get("fluid_program")
    clone = fluid.Program.parse_from_string(fmt.dumps(main, ["xx"], []))
    assert [op.type for op in clone.global_block().ops] == [
        op.type for op in main.global_block().ops
    ]
    with pytest.raises(ValueError, match="parse_from_string"):
        fluid.Program.parse_from_string(b"\x00garbage")


def test_optimizer_get_opti_var_name_list():
    """Fluid 1.8.5, Adam on fc(x, 1): moment1, moment2, beta1_pow_acc, beta2_pow_acc per parameter."""
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        x = fluid.data("x", [None, 2])
        loss = fluid.layers.reduce_mean(fluid.layers.fc(x, 1))
        opt = fluid.optimizer.Adam(0.1)
        opt.minimize(loss)
    names = opt.get_opti_var_name_list()
    assert sorted(names) == sorted(
        f"fc_0.{p}_{acc}_0"
        for p in ("w_0", "b_0")
        for acc in ("moment1", "moment2", "beta1_pow_acc", "beta2_pow_acc")
    )


def test_traced_layer_set_strategy_and_pyreader_next():
    with fluid.dygraph.guard():
        layer = fluid.dygraph.Linear(2, 1)
        _, traced = fluid.dygraph.TracedLayer.trace(
            layer, [fluid.dygraph.to_variable(np.ones((1, 2), "float32"))]
        )
        traced.set_strategy(fluid.BuildStrategy(), fluid.ExecutionStrategy())
        with pytest.raises(TypeError, match="build_strategy"):
            traced.set_strategy(build_strategy=1)
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.data("x", [None, 2])
        reader = fluid.io.PyReader(feed_list=[x], capacity=2, iterable=True)
    reader.decorate_batch_generator(
        lambda: iter([[np.ones((1, 2), "float32")], [np.zeros((1, 2), "float32")]]),
        fluid.CPUPlace(),
    )
    assert reader.queue.capacity() == 2
    first, second = reader.next(), reader.next()
    assert np.asarray(first[0]["x"]).sum() == 2.0 and np.asarray(second[0]["x"]).sum() == 0.0
    with pytest.raises(StopIteration):
        reader.next()


@pytest.mark.parametrize(
    ("dim", "g_shape", "g1", "v1"),
    [
        (None, (1, 1), [[9.277321]], [[0.9275, 1.9549], [3.0824, 4.1099], [4.9374, 5.9648]]),
        (0, (3, 1), [[2.101904], [5.0], [7.528569]], [[0.96, 2.02], [3.0, 4.0], [4.9803, 6.0164]]),
        (1, (1, 2), [[5.730146, 7.296232]], [[0.9314, 1.95], [3.0943, 4.1], [4.9571, 5.95]]),
    ],
    ids=["dim_none", "dim0", "dim1"],
)
def test_weight_norm_param_attr_matches_fluid(dim, g_shape, g1, v1):
    """Fluid 1.8.5: fc(x, 2, WeightNormParamAttr(dim, name='wn', init=[[1,2],[3,4],[5,6]]),
    no bias) on x=[[1, 0, 2]], loss reduce_sum, one SGD(0.1) step: wn_g / wn_v after it."""
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 3])
        init = fluid.initializer.NumpyArrayInitializer(
            np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "float32")
        )
        attr = fluid.WeightNormParamAttr(dim=dim, name="wn", initializer=init)
        y = fluid.layers.fc(x, 2, param_attr=attr, bias_attr=False)
        fluid.optimizer.SGD(0.1).minimize(fluid.layers.reduce_sum(y))
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        exe.run(start)
        assert np.array(scope.find_var("wn_g").get_tensor()).shape == g_shape
        (out,) = exe.run(main, feed={"x": np.array([[1.0, 0.0, 2.0]], "float32")}, fetch_list=[y])
        np.testing.assert_allclose(out, [[11.0, 14.0]], rtol=1e-6)  # w == v at first
        np.testing.assert_allclose(np.array(scope.find_var("wn_g").get_tensor()), g1, rtol=1e-5)
        np.testing.assert_allclose(np.array(scope.find_var("wn_v").get_tensor()), v1, atol=1e-4)
