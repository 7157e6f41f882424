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
