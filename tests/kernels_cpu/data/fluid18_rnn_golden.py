"""dynamic_lstm / dynamic_gru outputs and gradients from the real Fluid 1.8.5, as golden data.

``build(fluid)`` builds the same program with either framework from the same seeded inputs
and weights. Regenerate with the oracle:
``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_rnn_golden.py``
(writes ``fluid18_rnn_golden.npz`` next to this file).
"""

import os

import numpy as np

H = 3
LENS = [2, 4, 1]
CONFIGS = [
    dict(kind="lstm", use_peepholes=True, is_reverse=False),
    dict(kind="lstm", use_peepholes=False, is_reverse=True),
    dict(kind="gru", is_reverse=False, origin_mode=False),
    dict(kind="gru", is_reverse=True, origin_mode=True),
]


def build(fluid):
    """Returns (main, startup, feed, fetch names)."""
    rng = np.random.RandomState(0)
    rows = sum(LENS)
    main, startup = fluid.Program(), fluid.Program()
    feed, fetch = {}, []
    with fluid.program_guard(main, startup):
        loss_terms = []
        for k, cfg in enumerate(CONFIGS):
            width = (4 if cfg["kind"] == "lstm" else 3) * H
            xv = rng.uniform(-1, 1, (rows, width)).astype("float32")
            x = fluid.data(f"x{k}", [None, width], "float32", lod_level=1)
            x.stop_gradient = False
            feed[f"x{k}"] = (xv, [LENS])
            wv = rng.uniform(-0.5, 0.5, (H, width)).astype("float32")
            w = fluid.ParamAttr(
                name=f"w{k}", initializer=fluid.initializer.NumpyArrayInitializer(wv)
            )
            if cfg["kind"] == "lstm":
                bw = (7 if cfg["use_peepholes"] else 4) * H
                bv = rng.uniform(-0.5, 0.5, (1, bw)).astype("float32")
                b = fluid.ParamAttr(
                    name=f"b{k}", initializer=fluid.initializer.NumpyArrayInitializer(bv)
                )
                hidden, cell = fluid.layers.dynamic_lstm(
                    x,
                    size=width,
                    param_attr=w,
                    bias_attr=b,
                    use_peepholes=cfg["use_peepholes"],
                    is_reverse=cfg["is_reverse"],
                )
                outs = [hidden, cell]
            else:
                bv = rng.uniform(-0.5, 0.5, (1, width)).astype("float32")
                b = fluid.ParamAttr(
                    name=f"b{k}", initializer=fluid.initializer.NumpyArrayInitializer(bv)
                )
                hidden = fluid.layers.dynamic_gru(
                    x,
                    size=H,
                    param_attr=w,
                    bias_attr=b,
                    is_reverse=cfg["is_reverse"],
                    origin_mode=cfg["origin_mode"],
                )
                outs = [hidden]
            # the loss reads the hidden states only: Fluid 1.8.5's lstm_grad drops the gradient
            # that reaches the Cell output (its analytic gradient then disagrees with its own
            # finite differences; oar's does not - see tests/kernels_cpu/test_recurrent.py)
            coef = fluid.layers.assign(rng.uniform(0.5, 1.5, (rows, H)).astype("float32"))
            loss_terms.append(fluid.layers.reduce_sum(fluid.layers.elementwise_mul(outs[0], coef)))
            fetch += [o.name for o in outs]
        loss = fluid.layers.sums(loss_terms)
        fluid.backward.append_backward(loss)
        for k in range(len(CONFIGS)):
            fetch += [f"x{k}@GRAD", f"w{k}@GRAD", f"b{k}@GRAD"]
    return main, startup, feed, fetch


def run(fluid):
    main, startup, feed, fetch = build(fluid)
    place = fluid.CPUPlace()
    exe = fluid.Executor(place)
    exe.run(startup)
    feed = {k: fluid.create_lod_tensor(v, lod, place) for k, (v, lod) in feed.items()}
    values = exe.run(main, feed=feed, fetch_list=fetch, return_numpy=False)
    return [np.array(v) for v in values]


if __name__ == "__main__":
    import paddle.fluid as fluid

    values = run(fluid)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_rnn_golden.npz")
    np.savez(out, *values)
    print("wrote", out, len(values), "arrays")
