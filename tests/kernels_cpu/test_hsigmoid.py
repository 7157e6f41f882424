"""hierarchical_sigmoid (hsigmoid): default and custom trees, numeric gradients, Fluid 1.8.5."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

G = np.load(Path(__file__).parent / "data" / "fluid18_hsigmoid.npz")
rng = np.random.default_rng(101)


def _ref(X, W, Label, Bias, num_classes, PathTable=None, PathCode=None, **_):
    out = np.zeros((X.shape[0], 1))
    for i, c in enumerate(Label.ravel()):
        if PathTable is None:
            code, steps = c + num_classes, []
            j = 0
            while (code >> (j + 1)) - 1 >= 0:
                steps.append(((code >> (j + 1)) - 1, (code >> j) & 1))
                j += 1
        else:
            steps = [(n, b) for n, b in zip(PathTable[i], PathCode[i]) if n >= 0]
            steps = steps[
                : next((k for k, n in enumerate(PathTable[i]) if n < 0), len(PathTable[i]))
            ]
        for node, bit in steps:
            pre = np.clip(W[node] @ X[i] + Bias[node, 0], -40, 40)
            out[i, 0] += np.log1p(np.exp(pre)) - bit * pre
        length = PathTable.shape[1] if PathTable is not None else int(num_classes - 1).bit_length()
        out[i, 0] += (length - len(steps)) * np.log(2.0)  # Fluid's padded steps
    return {"Out": out}


X = rng.uniform(-1, 1, (4, 3))
CASES = [
    OpCase(
        "hierarchical_sigmoid",
        {
            "X": X,
            "W": rng.uniform(-1, 1, (5, 3)),
            "Label": np.array([[0], [5], [2], [3]], "int64"),
            "Bias": rng.uniform(-1, 1, (5, 1)),
        },
        {"num_classes": 6},
        ref=_ref,
        grad=["X", "W", "Bias"],
        grad_outputs=["Out"],
    ),
    OpCase(
        "hierarchical_sigmoid",
        {
            "X": X,
            "W": rng.uniform(-1, 1, (5, 3)),
            "Label": np.array([[0], [5], [2], [3]], "int64"),
            "PathTable": G["path_table"],
            "PathCode": G["path_code"],
            "Bias": rng.uniform(-1, 1, (5, 1)),
        },
        {"num_classes": 5},
        ref=_ref,
        grad=["X", "W", "Bias"],
        grad_outputs=["Out"],
        name="custom",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_hsigmoid(case):
    check_case(case)


@pytest.mark.parametrize("custom", [False, True])
def test_layer_matches_fluid18(custom):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 3], "float32")
        x.stop_gradient = False
        lab = fluid.data("l", [None, 1], "int64")
        kw = {}
        if custom:
            kw = dict(
                path_table=fluid.data("pt", [None, 3], "int64"),
                path_code=fluid.data("pc", [None, 3], "int64"),
                is_custom=True,
            )
        init = fluid.initializer.NumpyArrayInitializer
        out = fluid.layers.hsigmoid(
            x,
            lab,
            5 if custom else 6,
            param_attr=fluid.ParamAttr("w", initializer=init(G["w"])),
            bias_attr=fluid.ParamAttr("b", initializer=init(G["b"])),
            **kw,
        )
        block = main.global_block()
        grads = fluid.gradients([fluid.layers.reduce_sum(out)], [x, block.var("w"), block.var("b")])
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": G["x"], "l": G["label"]}
    if custom:
        feed.update(pt=G["path_table"], pc=G["path_code"])
    got = exe.run(main, feed=feed, fetch_list=[out] + grads, scope=scope)
    tag = "custom" if custom else "default"
    for k, v in zip(("out", "dx", "dw", "db"), got):
        np.testing.assert_allclose(v, G[f"{tag}_{k}"], rtol=1e-5, atol=1e-6, err_msg=f"{tag} {k}")


def test_bad_input_is_refused():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 3], "float32")
        lab = fluid.data("l", [None, 1], "int64")
        with pytest.raises(OarError, match="num_classes"):
            fluid.layers.hsigmoid(x, lab, 1)
        with pytest.raises(OarError, match="path_table"):
            fluid.layers.hsigmoid(x, lab, 4, is_custom=True)
