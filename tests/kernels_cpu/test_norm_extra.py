"""group_norm and instance_norm: numeric gradients, Fluid 1.8.5 golden data, and PyTorch."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

torch = pytest.importorskip("torch")
rng = np.random.default_rng(31)
GOLDEN = np.load(Path(__file__).parent / "data" / "fluid18_norm_extra.npz")


def _gn_ref(X, Scale, Bias, epsilon, groups, data_layout):
    """Groups of ceil(C / groups) channels, one at a time; an empty group has statistics 0."""
    x = np.moveaxis(X, -1, 1) if data_layout == "NHWC" else X
    n, c = x.shape[:2]
    size = -(-c // groups)
    mean, var, y = np.zeros((n, groups)), np.zeros((n, groups)), np.zeros(x.shape)
    for i in range(groups):
        xs = x[:, i * size : (i + 1) * size]
        if xs.size:
            m, v = xs.reshape(n, -1).mean(-1), xs.reshape(n, -1).var(-1)
            mean[:, i], var[:, i] = m, v
            shape = (n,) + (1,) * (x.ndim - 1)
            y[:, i * size : (i + 1) * size] = (xs - m.reshape(shape)) / np.sqrt(
                v.reshape(shape) + epsilon
            )
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = y * Scale.reshape(shape) + Bias.reshape(shape)
    return {
        "Y": np.moveaxis(y, 1, -1) if data_layout == "NHWC" else y,
        "Mean": mean,
        "Variance": var,
    }


def _in_ref(X, Scale, Bias, epsilon):
    n, c = X.shape[:2]
    xg = X.reshape(n, c, -1)
    mean, var = xg.mean(-1), xg.var(-1)
    rstd = 1 / np.sqrt(var + epsilon)
    y = ((xg - mean[..., None]) * rstd[..., None]).reshape(X.shape)
    shape = (1, -1) + (1,) * (X.ndim - 2)
    return {
        "Y": y * Scale.reshape(shape) + Bias.reshape(shape),
        "SavedMean": mean.ravel(),
        "SavedVariance": rstd.ravel(),
    }


def _gn_case(shape, groups, layout, grad, name=""):
    c = shape[-1 if layout == "NHWC" else 1]
    ins = {
        "X": rng.uniform(-1, 1, shape),
        "Scale": rng.uniform(0.5, 1.5, c),
        "Bias": rng.uniform(-1, 1, c),
    }
    attrs = {"epsilon": 1e-5, "groups": groups, "data_layout": layout}
    return OpCase("group_norm", ins, attrs, ref=_gn_ref, grad=grad, grad_outputs=["Y"], name=name)


CASES = [
    _gn_case((2, 4, 2, 3), 2, "NCHW", ["X", "Scale", "Bias"]),
    _gn_case((2, 3, 4), 4, "NHWC", ["X", "Scale"], "nhwc"),
    # uneven groups (3 + 3 + 1 channels), and 2 + 2 + 1 channels and an empty group
    _gn_case((2, 7, 2, 2), 3, "NCHW", ["X", "Scale", "Bias"], "uneven"),
    _gn_case((2, 3, 5), 4, "NHWC", ["X", "Scale"], "empty_group_nhwc"),
    OpCase(
        "instance_norm",
        {
            "X": rng.uniform(-1, 1, (2, 3, 2, 3)),
            "Scale": rng.uniform(0.5, 1.5, 3),
            "Bias": rng.uniform(-1, 1, 3),
        },
        {"epsilon": 1e-5},
        ref=_in_ref,
        grad=["X", "Scale", "Bias"],
        grad_outputs=["Y"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_norm_extra(case):
    check_case(case)


def _run_static(tag, build):
    g = {k[len(tag) + 1 :]: GOLDEN[k] for k in GOLDEN.files if k.startswith(tag + "_")}
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", list(g["x"].shape), "float32")
        x.stop_gradient = False
        init = fluid.initializer.NumpyArrayInitializer
        y = build(
            x,
            fluid.ParamAttr(name=tag + "_s", initializer=init(g["scale"])),
            fluid.ParamAttr(name=tag + "_b", initializer=init(g["bias"])),
        )
        loss = fluid.layers.reduce_sum(fluid.layers.elementwise_mul(y, fluid.layers.assign(g["w"])))
        block = main.global_block()
        grads = fluid.gradients([loss], [x, block.var(tag + "_s"), block.var(tag + "_b")])
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    stats = [op.output("Mean")[0] for op in block.ops if op.type == "group_norm"]
    stats += [op.output("Variance")[0] for op in block.ops if op.type == "group_norm"]
    got = exe.run(main, feed={"x": g["x"]}, fetch_list=[y] + grads + stats, scope=scope)
    for k, v in zip(("y", "dx", "dscale", "dbias", "mean", "variance"), got):
        # Fluid 1.8.5 reports an empty group's statistics as NaN; oar reports 0
        want = np.nan_to_num(g[k], nan=0.0)
        np.testing.assert_allclose(v, want, rtol=2e-4, atol=2e-5, err_msg=f"{tag} {k}")


@pytest.mark.parametrize(
    "tag, build",
    [
        ("gn", lambda v, pa, ba: fluid.layers.group_norm(v, 3, param_attr=pa, bias_attr=ba)),
        (
            "gnhwc",
            lambda v, pa, ba: fluid.layers.group_norm(
                v, 2, param_attr=pa, bias_attr=ba, data_layout="NHWC"
            ),
        ),
        ("in", lambda v, pa, ba: fluid.layers.instance_norm(v, param_attr=pa, bias_attr=ba)),
        ("gnu52", lambda v, pa, ba: fluid.layers.group_norm(v, 2, param_attr=pa, bias_attr=ba)),
        ("gnu73", lambda v, pa, ba: fluid.layers.group_norm(v, 3, param_attr=pa, bias_attr=ba)),
        ("gnu64", lambda v, pa, ba: fluid.layers.group_norm(v, 4, param_attr=pa, bias_attr=ba)),
        (
            "gnuhwc",
            lambda v, pa, ba: fluid.layers.group_norm(
                v, 3, param_attr=pa, bias_attr=ba, data_layout="NHWC"
            ),
        ),
    ],
)
def test_matches_fluid18(tag, build):
    _run_static(tag, build)


def test_against_torch():
    x = rng.uniform(-2, 2, (3, 6, 5, 4)).astype("float32")
    w, b = rng.uniform(0.5, 1.5, 6).astype("float32"), rng.uniform(-1, 1, 6).astype("float32")
    want_gn = torch.nn.functional.group_norm(
        torch.tensor(x), 3, torch.tensor(w), torch.tensor(b), 1e-5
    )
    want_in = torch.nn.functional.instance_norm(
        torch.tensor(x), weight=torch.tensor(w), bias=torch.tensor(b), eps=1e-5
    )
    init = fluid.initializer.NumpyArrayInitializer
    with fluid.dygraph.guard():
        v = fluid.dygraph.to_variable(x)
        pa, ba = fluid.ParamAttr(initializer=init(w)), fluid.ParamAttr(initializer=init(b))
        gn = fluid.layers.group_norm(v, 3, param_attr=pa, bias_attr=ba).numpy()
        pa, ba = fluid.ParamAttr(initializer=init(w)), fluid.ParamAttr(initializer=init(b))
        inn = fluid.layers.instance_norm(v, param_attr=pa, bias_attr=ba).numpy()
    np.testing.assert_allclose(gn, want_gn.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(inn, want_in.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda L, x: L.group_norm(x, 7), "must not exceed the number of channels"),
        (lambda L, x: L.group_norm(x, 0), "positive"),
        (lambda L, x: L.group_norm(x, 2, data_layout="NCDHW"), "data_layout"),
        (lambda L, x: L.instance_norm(fluid.data("flat", [3], "float32")), "2-D to 5-D"),
    ],
)
def test_bad_input_is_refused(build, match):
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [2, 6, 3, 3], "float32")
        with pytest.raises(OarError, match=match):
            build(fluid.layers, x)


def test_dygraph_group_norm_takes_uneven_groups_like_the_static_layer():
    g = {k[6:]: GOLDEN[k] for k in GOLDEN.files if k.startswith("gnu73_")}
    init = fluid.initializer.NumpyArrayInitializer
    with fluid.dygraph.guard():
        gn = fluid.dygraph.GroupNorm(
            7,
            3,
            param_attr=fluid.ParamAttr(initializer=init(g["scale"])),
            bias_attr=fluid.ParamAttr(initializer=init(g["bias"])),
        )
        x = fluid.dygraph.to_variable(g["x"])
        x.stop_gradient = False
        y = gn(x)
        fluid.layers.reduce_sum(y * fluid.dygraph.to_variable(g["w"])).backward()
        np.testing.assert_allclose(y.numpy(), g["y"], rtol=2e-4, atol=2e-5)
        np.testing.assert_allclose(x.gradient(), g["dx"], rtol=2e-4, atol=2e-5)
        np.testing.assert_allclose(gn.weight.gradient(), g["dscale"], rtol=2e-4, atol=2e-5)
        with pytest.raises(OarError, match="must not exceed"):
            fluid.dygraph.GroupNorm(3, 4)
