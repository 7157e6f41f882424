"""``fluid.layers.lstm``: the padded multi-layer LSTM that Fluid 1.8 runs with cuDNN
(op ``cudnn_lstm``, which has no CPU kernel in Fluid 1.8.5). oar builds it from existing ops,
so it runs on every device and differentiates through the usual grad ops.

Layout of the single flat weight parameter (cuDNN's, as PyTorch flattens it): for each layer,
for each direction (forward, then backward): ``W_ih`` [4H, in], ``W_hh`` [4H, H], ``b_ih``
[4H], ``b_hh`` [4H], gate rows in the order i, f, g (candidate), o. Layer 0 reads ``in`` =
input_size; later layers read H x directions. Input and outputs are time-major.
"""

from __future__ import annotations

import math
from typing import Any

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["lstm"]


def _L():
    from oar import fluid

    return fluid.layers


def _pieces(input_size: int, hidden: int, layers: int, dirs: int) -> tuple:
    """Offsets: [(layer, direction, offset, in_size)], and the total size."""
    out, total = [], 0
    for layer in range(layers):
        in_size = input_size if layer == 0 else hidden * dirs
        for d in range(dirs):
            out.append((layer, d, total, in_size))
            total += 4 * hidden * (in_size + hidden) + 8 * hidden
    return out, total


def _direction(steps_proj: list, w_hh: Any, bias: Any, h: Any, c: Any, reverse: bool) -> tuple:
    L = _L()
    order = range(len(steps_proj) - 1, -1, -1) if reverse else range(len(steps_proj))
    outs: list = [None] * len(steps_proj)
    for t in order:
        g = L.elementwise_add(
            L.elementwise_add(steps_proj[t], L.matmul(h, w_hh, transpose_y=True)), bias
        )
        i, f, cand, o = L.split(g, num_or_sections=4, dim=-1)
        c = L.elementwise_add(
            L.elementwise_mul(L.sigmoid(f), c), L.elementwise_mul(L.sigmoid(i), L.tanh(cand))
        )
        h = L.elementwise_mul(L.sigmoid(o), L.tanh(c))
        outs[t] = h
    return outs, h, c


def lstm(
    input: Any,
    init_h: Any,
    init_c: Any,
    max_len: int,
    hidden_size: int,
    num_layers: int,
    dropout_prob: float = 0.0,
    is_bidirec: bool = False,
    is_test: bool = False,
    name: str | None = None,
    default_initializer: Any = None,
    seed: int = -1,
) -> tuple:
    """A multi-layer (bi)LSTM over padded, time-major ``input`` [max_len, batch, input_size];
    ``init_h`` / ``init_c`` are [num_layers x directions, batch, hidden_size]. Returns
    ``(rnn_out [max_len, batch, hidden_size x directions], last_h, last_c)``. Dropout
    (upscale in train) applies between layers, not after the last."""
    from oar.framework.param_attr import ParamAttr
    from oar.initializer import Uniform

    for arg, v in (("input", input), ("init_h", init_h), ("init_c", init_c)):
        check_variable("lstm", arg, v)
    if len(input.shape) != 3 or int(input.shape[0]) != int(max_len) or input.shape[2] < 0:
        raise ArgumentError(
            "lstm",
            f"input must be time-major [max_len={max_len}, batch, input_size] with max_len and "
            f"input_size known, given shape {list(input.shape)}",
        )
    L = _L()
    dirs, H = (2 if is_bidirec else 1), int(hidden_size)
    pieces, total = _pieces(int(input.shape[2]), H, int(num_layers), dirs)
    helper = LayerHelper("cudnn_lstm", name=name)
    bound = 1.0 / math.sqrt(H)
    init = default_initializer or Uniform(-bound, bound, seed=max(seed, 0))
    w = helper.create_parameter(ParamAttr(initializer=init), [total], input.dtype)

    def part(off: int, shape: list) -> Any:
        n = math.prod(shape)
        return L.reshape(L.slice(w, axes=[0], starts=[off], ends=[off + n]), shape)

    h0 = L.unstack(init_h, axis=0, num=num_layers * dirs)
    c0 = L.unstack(init_c, axis=0, num=num_layers * dirs)
    layer_in = input
    last_h, last_c = [], []
    for layer in range(num_layers):
        outs = []
        for _, d, off, in_size in [p for p in pieces if p[0] == layer]:
            w_ih = part(off, [4 * H, in_size])
            w_hh = part(off + 4 * H * in_size, [4 * H, H])
            b_off = off + 4 * H * (in_size + H)
            bias = L.elementwise_add(part(b_off, [4 * H]), part(b_off + 4 * H, [4 * H]))
            proj = L.matmul(layer_in, w_ih, transpose_y=True)  # [T, B, 4H] in one product
            steps = L.unstack(proj, axis=0, num=max_len)
            k = layer * dirs + d
            o, h, c = _direction(steps, w_hh, bias, h0[k], c0[k], reverse=d == 1)
            outs.append(o)
            last_h.append(h)
            last_c.append(c)
        step_out = [
            L.concat([o[t] for o in outs], 1) if dirs == 2 else outs[0][t] for t in range(max_len)
        ]
        layer_in = L.stack(step_out, axis=0)
        if dropout_prob and layer + 1 < num_layers:
            layer_in = L.dropout(
                layer_in, dropout_prob, is_test=is_test, dropout_implementation="upscale_in_train"
            )
    return layer_in, L.stack(last_h, axis=0), L.stack(last_c, axis=0)
