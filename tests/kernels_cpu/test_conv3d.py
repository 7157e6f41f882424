"""conv3d and conv3d_transpose: numeric gradients and differential tests against PyTorch."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case, run_forward

torch = pytest.importorskip("torch")
F = torch.nn.functional
rng = np.random.default_rng(41)


def r(*shape):
    return rng.uniform(-1, 1, shape)


def _attrs(**kw):
    a = {
        "strides": [1, 1, 1],
        "paddings": [0, 0, 0],
        "dilations": [1, 1, 1],
        "groups": 1,
        "padding_algorithm": "EXPLICIT",
        "data_format": "NCDHW",
    }
    a.update(kw)
    return a


def _torch_pad(p):
    return p if len(p) == 3 else None


def _conv_ref(Input, Filter, strides, paddings, dilations, groups, **_):
    out = F.conv3d(
        torch.tensor(Input),
        torch.tensor(Filter),
        stride=strides,
        padding=paddings,
        dilation=dilations,
        groups=groups,
    )
    return {"Output": out.numpy()}


def _convt_ref(Input, Filter, strides, paddings, dilations, groups, **_):
    out = F.conv_transpose3d(
        torch.tensor(Input),
        torch.tensor(Filter),
        stride=strides,
        padding=paddings,
        dilation=dilations,
        groups=groups,
    )
    return {"Output": out.numpy()}


CASES = [
    OpCase(
        "conv3d",
        {"Input": r(1, 2, 3, 4, 3), "Filter": r(2, 2, 2, 2, 2)},
        _attrs(),
        ref=_conv_ref,
        grad=["Input", "Filter"],
    ),
    OpCase(
        "conv3d",
        {"Input": r(2, 4, 4, 3, 4), "Filter": r(4, 2, 2, 3, 2)},
        _attrs(strides=[2, 1, 2], paddings=[1, 1, 0], dilations=[1, 1, 1], groups=2),
        ref=_conv_ref,
        grad=["Input", "Filter"],
        name="strided_grouped",
    ),
    OpCase(
        "conv3d_transpose",
        {"Input": r(1, 2, 2, 3, 2), "Filter": r(2, 3, 2, 2, 2)},
        _attrs(strides=[2, 1, 2], paddings=[0, 1, 0], output_size=[]),
        ref=_convt_ref,
        grad=["Input", "Filter"],
    ),
    OpCase(
        "conv3d_transpose",
        {"Input": r(1, 4, 2, 2, 2), "Filter": r(4, 1, 2, 2, 2)},
        _attrs(groups=2, dilations=[2, 1, 1], output_size=[]),
        ref=_convt_ref,
        grad=["Input", "Filter"],
        name="grouped_dilated",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_conv3d(case):
    check_case(case)


def test_ndhwc_and_same_padding_against_torch():
    x, w = r(2, 5, 6, 4, 3).astype("float32"), r(4, 3, 3, 3, 3).astype("float32")
    case = OpCase(
        "conv3d",
        {"Input": x, "Filter": w},
        _attrs(data_format="NDHWC", padding_algorithm="SAME", strides=[2, 2, 1]),
    )
    got = run_forward(case)["Output"][0]
    # SAME with stride 2 on 5: total pad 2 -> (1, 1); on 6: total 1 -> (0, 1); on 4, stride 1: (1, 1)
    xt = F.pad(torch.tensor(x).permute(0, 4, 1, 2, 3), (1, 1, 0, 1, 1, 1))
    want = F.conv3d(xt, torch.tensor(w), stride=(2, 2, 1)).permute(0, 2, 3, 4, 1).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_layers_train_a_step():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 2, 4, 4, 4], "float32")
        h = fluid.layers.conv3d(x, 4, 3, padding=1, act="relu")
        h = fluid.layers.pool3d(h, 2, "max", 2)
        h = fluid.layers.conv3d_transpose(h, 2, filter_size=2, stride=2)
        loss = fluid.layers.reduce_mean(fluid.layers.square(h - x))
        fluid.optimizer.SGD(0.1).minimize(loss)
    assert h.shape == (-1, 2, 4, 4, 4)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": rng.uniform(0, 1, (2, 2, 4, 4, 4)).astype("float32")}
    losses = [exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0] for _ in range(5)]
    assert losses[-1] < losses[0]


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda L, x: L.conv3d(fluid.data("flat", [2, 3, 4, 4], "float32"), 2, 3), "5-D"),
        (lambda L, x: L.conv3d(x, 2, 3, groups=2), "divisible"),
        (lambda L, x: L.conv3d(x, 2, [3, 3]), "3 ints"),
        (lambda L, x: L.conv3d(x, 2, 9), "does not fit"),
        (lambda L, x: L.conv3d_transpose(x, 2), "filter_size or output_size"),
        (lambda L, x: L.conv3d(x, 2, 3, data_format="NCHW"), "data_format"),
    ],
)
def test_bad_input_is_refused(build, match):
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [2, 3, 4, 4, 4], "float32")
        with pytest.raises(OarError, match=match):
            build(fluid.layers, x)
