"""Sequence models: dynamic_lstm forward + backward on a LoD batch against PyTorch's
``nn.LSTM`` on the packed equivalent, and sequence_pool against a padded-mask numpy floor.

LSTM: 64 sequences of lengths 10-100, input width 128, hidden 128, no peepholes; the input
projection is an ``fc`` in oar (Fluid's dynamic_lstm takes projected input) and inside
``nn.LSTM`` in torch. Both start from the same weights (torch's gate order i, f, g, o mapped
to Fluid's c, i, f, o) and compute the same loss, sum of all hidden states, and all gradients.
"""

from __future__ import annotations

import numpy as np
from benchlib import Benchmark, Unavailable, require

N_SEQ, IN, H = 64, 128, 128
_rng = np.random.default_rng(7)
LENS = _rng.integers(10, 101, N_SEQ).tolist()
X = _rng.standard_normal((sum(LENS), IN)).astype(np.float32)
W_IH = (_rng.standard_normal((4 * H, IN)) / np.sqrt(IN)).astype(np.float32)  # torch layout i,f,g,o
W_HH = (_rng.standard_normal((4 * H, H)) / np.sqrt(H)).astype(np.float32)
B = _rng.uniform(-0.1, 0.1, 4 * H).astype(np.float32)
_TO_FLUID = np.concatenate(
    [np.arange(2 * H, 3 * H), np.arange(0, H), np.arange(H, 2 * H), np.arange(3 * H, 4 * H)]
)


def oar_lstm():
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    init = fluid.initializer.NumpyArrayInitializer
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, IN], "float32", lod_level=1)
        proj = fluid.layers.fc(
            x,
            4 * H,
            param_attr=fluid.ParamAttr(initializer=init(W_IH.T[:, _TO_FLUID].copy())),
            bias_attr=False,
        )
        hidden, _ = fluid.layers.dynamic_lstm(
            proj,
            4 * H,
            use_peepholes=False,
            param_attr=fluid.ParamAttr(
                name="lstm_w", initializer=init(W_HH.T[:, _TO_FLUID].copy())
            ),
            bias_attr=fluid.ParamAttr(initializer=init(B[_TO_FLUID].reshape(1, -1))),
        )
        loss = fluid.layers.reduce_sum(hidden)
        fluid.backward.append_backward(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": fluid.create_lod_tensor(X, [LENS], fluid.CPUPlace())}
    fetch = [loss, "lstm_w@GRAD"]

    def step():
        return exe.run(main, feed=feed, fetch_list=fetch, scope=scope)[0]

    return step


def torch_lstm():
    torch = require("torch")
    lstm = torch.nn.LSTM(IN, H)
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.from_numpy(W_IH))
        lstm.weight_hh_l0.copy_(torch.from_numpy(W_HH))
        lstm.bias_ih_l0.copy_(torch.from_numpy(B))
        lstm.bias_hh_l0.zero_()
    off = np.concatenate([[0], np.cumsum(LENS)])
    seqs = [torch.from_numpy(X[a:b]) for a, b in zip(off[:-1], off[1:])]
    packed = torch.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)

    def step():
        lstm.zero_grad()
        out, _ = lstm(packed)
        loss = out.data.sum()
        loss.backward()
        return loss.detach().reshape(1)

    return step


BENCHMARKS = [
    Benchmark(
        "dynamic_lstm",
        "dynamic_lstm fwd+bwd, 64 LoD sequences of 10-100 steps, 128 -> hidden 128 (torch: nn.LSTM on packed)",
        {"oar": oar_lstm, "torch": torch_lstm},
        targets={"oar/torch": 1.5},
        rtol=1e-3,
        atol=1e-2,
    ),
]


# GRU: the same sequences, hidden 128. Fluid's candidate is tanh(x_c + (r * h) @ W_c) and
# torch's tanh(x_n + r * (h @ W_hn + b_hn)): the models differ in that product, so the
# contenders do the same work but their losses are not compared (check=None).
W_GRU_IH = (_rng.standard_normal((3 * H, IN)) / np.sqrt(IN)).astype(np.float32)
W_GRU_HH = (_rng.standard_normal((3 * H, H)) / np.sqrt(H)).astype(np.float32)


def oar_gru():
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    init = fluid.initializer.NumpyArrayInitializer
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, IN], "float32", lod_level=1)
        proj = fluid.layers.fc(
            x, 3 * H, param_attr=fluid.ParamAttr(initializer=init(W_GRU_IH.T.copy()))
        )
        hidden = fluid.layers.dynamic_gru(
            proj,
            H,
            param_attr=fluid.ParamAttr(name="gru_w", initializer=init(W_GRU_HH.T.copy())),
        )
        loss = fluid.layers.reduce_sum(hidden)
        fluid.backward.append_backward(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": fluid.create_lod_tensor(X, [LENS], fluid.CPUPlace())}
    fetch = [loss, "gru_w@GRAD"]

    def step():
        return exe.run(main, feed=feed, fetch_list=fetch, scope=scope)[0]

    return step


def torch_gru():
    torch = require("torch")
    gru = torch.nn.GRU(IN, H)
    with torch.no_grad():
        gru.weight_ih_l0.copy_(torch.from_numpy(W_GRU_IH))
        gru.weight_hh_l0.copy_(torch.from_numpy(W_GRU_HH))
    off = np.concatenate([[0], np.cumsum(LENS)])
    seqs = [torch.from_numpy(X[a:b]) for a, b in zip(off[:-1], off[1:])]
    packed = torch.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)

    def step():
        gru.zero_grad()
        out, _ = gru(packed)
        loss = out.data.sum()
        loss.backward()
        return loss.detach().reshape(1)

    return step


BENCHMARKS.append(
    Benchmark(
        "dynamic_gru",
        "dynamic_gru fwd+bwd, 64 LoD sequences of 10-100 steps, 128 -> hidden 128 (torch: nn.GRU "
        "on packed; the candidate's reset gate sits differently, so losses are not compared)",
        {"oar": oar_gru, "torch": torch_gru},
        targets={"oar/torch": 1.0},
        check=None,
    )
)

POOL_X = _rng.standard_normal((sum(LENS), 256)).astype(np.float32)


def oar_pool():
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.data("x", [None, 256], "float32", lod_level=1)
        outs = [fluid.layers.sequence_pool(x, kind) for kind in ("sum", "max")]
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {"x": fluid.create_lod_tensor(POOL_X, [LENS], fluid.CPUPlace())}

    def step():
        return exe.run(main, feed=feed, fetch_list=outs)

    return step


def numpy_pool():
    """The padded equivalent: scatter into [batch, max_len, width], mask, reduce."""
    longest = max(LENS)
    mask = np.arange(longest)[None, :] < np.array(LENS)[:, None]

    def step():
        padded = np.zeros((N_SEQ, longest, 256), np.float32)
        padded[mask] = POOL_X
        total = padded.sum(axis=1)
        padded[~mask] = -np.inf
        return [total, padded.max(axis=1)]

    return step


BENCHMARKS.append(
    Benchmark(
        "sequence_pool",
        "sequence_pool sum + max over 64 LoD sequences of 10-100 rows x 256 (numpy: padded + mask)",
        {"oar": oar_pool, "numpy": numpy_pool},
        check=lambda results: (
            [
                np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
                for a, b in zip(results["oar"], results["numpy"])
            ]
            if "numpy" in results and "oar" in results
            else None
        ),
    )
)
