"""oar-deploy's inference-only fused ops (``fc``, ``conv2d_fusion``) against numpy references.

They have no gradient (the passes create them in inference programs only).
Without oar-deploy the CASES list is empty and the tests are skipped.
"""

import importlib.util

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(11)
HAVE_DEPLOY = importlib.util.find_spec("oar_deploy") is not None

ACTS = {
    "": lambda v: v,
    "identity": lambda v: v,
    "relu": lambda v: np.maximum(v, 0),
    "tanh": np.tanh,
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
}


def fc_ref(Input, W, Bias, in_num_col_dims, activation_type):
    lead = Input.shape[:in_num_col_dims]
    out = Input.reshape(int(np.prod(lead)), -1) @ W + Bias
    return {"Out": ACTS[activation_type](out).reshape(*lead, W.shape[1])}


def conv_ref(Input, Filter, Bias, strides, paddings, groups, activation):
    n, c, h, w = Input.shape
    oc, icg, kh, kw = Filter.shape
    ph, pw = paddings
    sh, sw = strides
    x = np.pad(Input, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    out = np.zeros((n, oc, oh, ow))
    ocg = oc // groups
    for o in range(oc):
        g = o // ocg
        for i in range(oh):
            for j in range(ow):
                patch = x[:, g * icg : (g + 1) * icg, i * sh : i * sh + kh, j * sw : j * sw + kw]
                out[:, o, i, j] = (patch * Filter[o]).sum(axis=(1, 2, 3))
    out += Bias.reshape(1, -1, 1, 1)
    return {"Output": ACTS[activation](out)}


def _fc(act, x_shape, k):
    cols = int(np.prod(x_shape[k:]))
    return OpCase(
        "fc",
        {
            "Input": rng.standard_normal(x_shape),
            "W": rng.standard_normal((cols, 3)),
            "Bias": rng.standard_normal(3),
        },
        {"in_num_col_dims": k, "activation_type": act},
        ref=lambda Input, W, Bias, in_num_col_dims, activation_type: fc_ref(
            Input, W, Bias, in_num_col_dims, activation_type
        ),
        name=f"{act or 'none'}-{k}",
    )


def _conv(act, groups, stride):
    return OpCase(
        "conv2d_fusion",
        {
            "Input": rng.standard_normal((2, 4, 6, 5)),
            "Filter": rng.standard_normal((6, 4 // groups, 3, 3)),
            "Bias": rng.standard_normal(6),
        },
        {"strides": [stride, stride], "paddings": [1, 1], "groups": groups, "activation": act},
        ref=lambda Input, Filter, Bias, strides, paddings, groups, activation: conv_ref(
            Input, Filter, Bias, strides, paddings, groups, activation
        ),
        name=f"{act}-g{groups}-s{stride}",
    )


CASES = (
    [
        _fc("", (4, 5), 1),
        _fc("relu", (4, 5), 1),
        _fc("tanh", (2, 3, 4), 2),
        _fc("sigmoid", (2, 2, 3, 3), 1),
        _conv("identity", 1, 1),
        _conv("relu", 2, 2),
        _conv("sigmoid", 1, 1),
    ]
    if HAVE_DEPLOY
    else []
)


@pytest.mark.skipif(not HAVE_DEPLOY, reason="oar-deploy is not installed")
@pytest.mark.parametrize("case", CASES, ids=str)
def test_fused_inference_op(case):
    check_case(case)
