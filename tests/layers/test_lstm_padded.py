"""fluid.layers.lstm (Fluid's cudnn_lstm: padded, time-major, multi-layer, bidirectional) against
PyTorch's nn.LSTM with the same weights in cuDNN's flat layout: outputs, last states and
gradients. (Fluid 1.8.5's cudnn_lstm has no CPU kernel, so it cannot be the oracle here.)"""

import inspect

import numpy as np
import pytest
from oar import fluid

torch = pytest.importorskip("torch")
T, B, IN, H = 4, 3, 5, 4


def _flat(net, layers, dirs):
    parts = []
    for layer in range(layers):
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                parts.append(getattr(net, kind + sfx).detach().numpy().reshape(-1))
    return np.concatenate(parts).astype("float32")


@pytest.mark.parametrize("layers, bidirec", [(1, False), (2, True)])
def test_lstm_equals_torch(layers, bidirec):
    dirs = 2 if bidirec else 1
    torch.manual_seed(0)
    net = torch.nn.LSTM(IN, H, num_layers=layers, bidirectional=bidirec)
    rng = np.random.default_rng(1)
    xv = rng.standard_normal((T, B, IN)).astype("float32")
    h0v = rng.standard_normal((layers * dirs, B, H)).astype("float32")
    c0v = rng.standard_normal((layers * dirs, B, H)).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [T, B, IN], "float32")
        x.stop_gradient = False
        h0 = fluid.data("h0", [layers * dirs, B, H], "float32")
        c0 = fluid.data("c0", [layers * dirs, B, H], "float32")
        out, last_h, last_c = fluid.layers.lstm(x, h0, c0, T, H, layers, is_bidirec=bidirec)
        loss = fluid.layers.sums(
            [fluid.layers.reduce_sum(v) for v in (out, last_h, fluid.layers.scale(last_c, 0.5))]
        )
        (w,) = main.global_block().all_parameters()
        fluid.backward.append_backward(loss)
    assert tuple(w.shape) == (_flat(net, layers, dirs).size,)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    scope.find_var(w.name).get_tensor().set(_flat(net, layers, dirs), fluid.CPUPlace())
    got = exe.run(
        main,
        feed={"x": xv, "h0": h0v, "c0": c0v},
        fetch_list=[out, last_h, last_c, "x@GRAD", w.name + "@GRAD"],
        scope=scope,
    )
    xt = torch.from_numpy(xv).requires_grad_()
    o, (hn, cn) = net(xt, (torch.from_numpy(h0v), torch.from_numpy(c0v)))
    (o.sum() + hn.sum() + 0.5 * cn.sum()).backward()
    grads = []
    for layer in range(layers):
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                grads.append(getattr(net, kind + sfx).grad.numpy().reshape(-1))
    want = [o.detach().numpy(), hn.detach().numpy(), cn.detach().numpy(), xt.grad.numpy()]
    want.append(np.concatenate(grads))
    for i, (g, e) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5, err_msg=f"fetch {i}")


def test_signature_is_fluids():
    names = list(inspect.signature(fluid.layers.lstm).parameters)
    assert names == [
        "input", "init_h", "init_c", "max_len", "hidden_size", "num_layers", "dropout_prob",
        "is_bidirec", "is_test", "name", "default_initializer", "seed",
    ]  # fmt: skip


def test_input_length_must_be_max_len():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [3, 2, 5], "float32")
        h = fluid.data("h", [1, 2, 4], "float32")
        with pytest.raises(ValueError, match=r"lstm: input must be time-major \[max_len=4"):
            fluid.layers.lstm(x, h, h, 4, 4, 1)
