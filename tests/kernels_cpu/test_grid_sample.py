"""affine_grid and grid_sampler: numeric gradients, PyTorch (align_corners=True) and Fluid 1.8.5."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

torch = pytest.importorskip("torch")
F = torch.nn.functional
rng = np.random.default_rng(71)
GOLDEN = np.load(Path(__file__).parent / "data" / "fluid18_grid_sample.npz")


def _grid_ref(Theta, output_shape, **_):
    return {"Output": F.affine_grid(torch.tensor(Theta), output_shape, align_corners=True).numpy()}


def _sample_ref(X, Grid, **_):
    return {
        "Output": F.grid_sample(torch.tensor(X), torch.tensor(Grid), align_corners=True).numpy()
    }


def _grid(n, h, w):
    # away from integer pixel positions (the bilinear kinks) for the finite differences
    g = rng.uniform(-1.15, 1.15, (n, h, w, 2))
    return g


CASES = [
    OpCase(
        "affine_grid",
        {"Theta": rng.uniform(-1, 1, (2, 2, 3))},
        {"output_shape": [2, 3, 4, 5]},
        ref=_grid_ref,
        grad=["Theta"],
    ),
    OpCase(
        "grid_sampler",
        {"X": rng.uniform(-1, 1, (2, 2, 3, 4)), "Grid": _grid(2, 3, 4)},
        ref=_sample_ref,
        grad=["X", "Grid"],
        grad_rtol=1e-3,
        grad_atol=1e-5,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_grid_sample(case):
    check_case(case)


def test_matches_fluid18():
    g = GOLDEN
    with fluid.dygraph.guard():
        v = fluid.dygraph.to_variable
        grid = fluid.layers.affine_grid(v(g["theta"]), [1, 2, 2, 3]).numpy()
        out = fluid.layers.grid_sampler(v(g["x"]), v(g["grid"])).numpy()
    np.testing.assert_allclose(grid, g["g"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(out, g["o"], rtol=1e-5, atol=1e-6)


def test_spatial_transformer_trains_in_a_program():
    main, startup = fluid.Program(), fluid.Program()
    # seeded: with random initial weights the loss rose over 15 steps in about half the runs
    main.random_seed = startup.random_seed = 2
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 1, 6, 6], "float32")
        theta = fluid.layers.reshape(
            fluid.layers.fc(fluid.layers.reshape(x, [-1, 36]), 6, act="tanh"), [-1, 2, 3]
        )
        grid = fluid.layers.affine_grid(theta, [2, 1, 6, 6])
        y = fluid.layers.grid_sampler(x, grid)
        loss = fluid.layers.reduce_mean(fluid.layers.square(y - x))
        fluid.optimizer.Adam(0.05).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": rng.uniform(0, 1, (2, 1, 6, 6)).astype("float32")}
    losses = [float(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]) for _ in range(15)]
    assert losses[-1] < losses[0]


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda L, t, x: L.affine_grid(t, [2, 3]), "4 positive ints"),
        (lambda L, t, x: L.affine_grid(x, [2, 1, 4, 4]), r"\[N, 2, 3\]"),
        (lambda L, t, x: L.grid_sampler(x, fluid.data("g", [2, 3, 3, 2], "float32")), "match X"),
    ],
)
def test_bad_input_is_refused(build, match):
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        t = fluid.data("t", [2, 2, 3], "float32")
        x = fluid.data("x", [2, 1, 4, 4], "float32")
        with pytest.raises(OarError, match=match):
            build(fluid.layers, t, x)
