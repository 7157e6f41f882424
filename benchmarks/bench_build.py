"""Building programs and calling layer functions: the cost of the layer -> builder path.

- ``static_build``: build the MLP 784-512-512-10 + softmax cross_entropy + mean + Adam
  ``minimize`` into a fresh Program (about 60 ops with backward and updates); against Fluid 1.8
  when ``paddle.fluid`` is importable. Per-step time is what a user waits for at start-up.
- ``dygraph_layer_ops``: 200 ``fluid.layers.elementwise_add(h, y)`` on [4] tensors in dygraph:
  each call goes through LayerHelper and the eager builder (the operators' ``h + y`` take a
  shorter path, see ``dygraph_per_op``); against numpy and PyTorch eager.
"""

from __future__ import annotations

import numpy as np
from benchlib import Benchmark, Unavailable, require

SIZES = (784, 512, 512, 10)
N_OPS = 200
X = np.arange(4, dtype=np.float32)
Y = np.full(4, 0.5, dtype=np.float32)


def _build_mlp(fluid):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        h = fluid.layers.data("x", [SIZES[0]], dtype="float32")
        label = fluid.layers.data("label", [1], dtype="int64")
        for i, size in enumerate(SIZES[1:]):
            h = fluid.layers.fc(h, size, act="softmax" if i == len(SIZES) - 2 else "relu")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(h, label))
        fluid.optimizer.Adam(learning_rate=1e-3).minimize(loss)
    return len(main.global_block().ops)


def oar_build_step():
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    return lambda: _build_mlp(fluid)


def paddle_build_step():
    fluid = require("paddle.fluid")
    return lambda: _build_mlp(fluid)


def oar_layer_ops_step():
    try:
        from oar import fluid
        from oar.framework.mode import _dygraph_tracer, _set_tracer
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    with fluid.dygraph.guard():
        tracer = _dygraph_tracer()
        x, y = fluid.dygraph.to_variable(X), fluid.dygraph.to_variable(Y)
    add = fluid.layers.elementwise_add

    def step():
        old = _set_tracer(tracer)
        try:
            h = x
            for _ in range(N_OPS):
                h = add(h, y)
            return h.numpy()
        finally:
            _set_tracer(old)

    return step


def numpy_layer_ops_step():
    def step():
        h = X
        for _ in range(N_OPS):
            h = np.add(h, Y)
        return h

    return step


def torch_layer_ops_step():
    torch = require("torch")
    x, y = torch.from_numpy(X.copy()), torch.from_numpy(Y.copy())

    def step():
        h = x
        for _ in range(N_OPS):
            h = torch.add(h, y)
        return h.numpy()

    return step


BENCHMARKS = [
    Benchmark(
        name="static_build",
        description="build MLP 784-512-512-10 + cross_entropy + Adam minimize into a new Program",
        contenders={"oar": oar_build_step, "paddle": paddle_build_step},
        check=None,
    ),
    Benchmark(
        name="dygraph_layer_ops",
        description=f"{N_OPS} fluid.layers.elementwise_add calls on [4] tensors in dygraph",
        contenders={
            "oar": oar_layer_ops_step,
            "numpy": numpy_layer_ops_step,
            "torch": torch_layer_ops_step,
        },
        ops_per_step=N_OPS,
    ),
]
