"""tree_conv / dygraph TreeConv against Fluid 1.8.5 (outputs and gradients), numeric gradients."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

G = np.load(Path(__file__).parents[1] / "dygraph" / "data" / "fluid18_tree_conv.npz")
rng = np.random.default_rng(171)

CASES = [
    OpCase(
        "tree_conv",
        {
            "NodesVector": rng.uniform(-1, 1, (2, 7, 3)),
            "EdgeSet": G["edges"],
            "Filter": rng.uniform(-1, 1, (3, 3, 2, 2)),
        },
        {"max_depth": 3},
        grad=["NodesVector", "Filter"],
    )
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_tree_conv(case):
    check_case(case)


@pytest.mark.parametrize("md", [2, 3])
def test_dygraph_layer_matches_fluid18(md):
    D = fluid.dygraph
    with D.guard():
        tc = D.TreeConv(
            3,
            4,
            2,
            max_depth=md,
            param_attr=fluid.ParamAttr(
                initializer=fluid.initializer.NumpyArrayInitializer(G[f"w{md}"])
            ),
        )
        x = D.to_variable(G["x"])
        x.stop_gradient = False
        y = tc(x, D.to_variable(G["edges"]))
        fluid.layers.reduce_sum(y).backward()
        np.testing.assert_allclose(y.numpy(), G[f"out{md}"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(tc.weight.gradient(), G[f"dw{md}"], rtol=1e-4, atol=1e-5)
        if md == 2:
            # Fluid 1.8.5's analytic input gradient is off; its own central differences
            # (eps 1e-2) give these values, which oar's analytic gradient matches
            np.testing.assert_allclose(x.gradient()[0, :2, 0], [-1.041412, -2.391529], rtol=1e-3)
    assert fluid.TreeConv is D.TreeConv


def test_bad_arguments_are_refused():
    with fluid.dygraph.guard():
        with pytest.raises(OarError, match="max_depth"):
            fluid.dygraph.TreeConv(3, 4, max_depth=0)


def test_contrib_static_layer_matches_fluid18():
    """contrib.tree_conv builds Fluid 1.8.5's program: a [F, 3, out, filters] filter, a bias
    over [nodes, out, filters] (zero at start), tanh; outputs equal Fluid's on the golden data."""
    import inspect

    assert list(inspect.signature(fluid.contrib.tree_conv).parameters) == [
        "nodes_vector", "edge_set", "output_size", "num_filters", "max_depth", "act",
        "param_attr", "bias_attr", "name",
    ]  # fmt: skip
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 7, 3])
        e = fluid.data("e", [None, 6, 2], "int32")
        w = fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(G["w3"]))
        y = fluid.contrib.tree_conv(x, e, 4, num_filters=2, max_depth=3, param_attr=w)
        loss = fluid.layers.reduce_sum(y)
        fluid.backward.append_backward(loss)
    params = {p.name: p.shape for p in main.global_block().all_parameters()}
    assert sorted(params.values()) == [(3, 3, 4, 2), (7, 4, 2)]
    assert [op.type for op in main.global_block().ops][:3] == [
        "tree_conv",
        "elementwise_add",
        "tanh",
    ]
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    feed = {"x": G["x"].astype("float32"), "e": G["edges"].astype("int32")}
    (out,) = exe.run(main, feed=feed, fetch_list=[y])
    np.testing.assert_allclose(out, G["out3"], rtol=1e-5, atol=1e-6)
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 7, 3])
        e = fluid.data("e", [None, 6, 2], "int32")
        with pytest.raises(OarError, match="output_size"):
            fluid.contrib.tree_conv(x, e, 0)
        y = fluid.contrib.tree_conv(x, e, 2, bias_attr=False, act=None)
        assert [op.type for op in y.block.ops] == ["tree_conv"]
