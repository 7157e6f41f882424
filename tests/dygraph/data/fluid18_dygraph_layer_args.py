"""Golden facts: Fluid 1.8.5's dygraph layer classes built with their documented minimal
arguments (and a few common variants), then called once on a small batch.

The same ``probe(fluid)`` runs under oar in tests/dygraph/test_dygraph_layer_args.py. Run this
file with the Fluid 1.8.5 interpreter to rewrite fluid18_dygraph_layer_args.json next to it.
Per case: accepted or refused (and the exception's class), the (structured name, shape) of each
parameter, the output shape.
"""

import json
import os

import numpy as np


def _f(*shape):
    return np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape).astype("float32")


def _i(high, *shape):
    return (np.arange(int(np.prod(shape))) % high).reshape(shape).astype("int64")


def cases(fluid):
    """name -> (constructor thunk, forward inputs as numpy arrays, or None to only construct)."""
    D = fluid.dygraph
    c = {
        "Linear": (lambda: D.Linear(4, 3), [_f(2, 4)]),
        "Linear_act_f64": (lambda: D.Linear(4, 3, act="relu", dtype="float64"), None),
        "Conv2D": (
            lambda: D.Conv2D(num_channels=2, num_filters=3, filter_size=3),
            [_f(1, 2, 5, 5)],
        ),
        "Conv2D_lists": (
            lambda: D.Conv2D(2, 4, [3, 1], stride=[2, 1], padding=[1, 0], groups=2, act="relu"),
            [_f(1, 2, 5, 5)],
        ),
        "Conv2D_no_bias": (lambda: D.Conv2D(2, 3, 1, bias_attr=False), [_f(1, 2, 3, 3)]),
        "Conv2DTranspose": (
            lambda: D.Conv2DTranspose(num_channels=2, num_filters=3, filter_size=3),
            [_f(1, 2, 4, 4)],
        ),
        "Conv2DTranspose_output_size": (
            lambda: D.Conv2DTranspose(2, 3, filter_size=None, output_size=[6, 6]),
            [_f(1, 2, 4, 4)],
        ),
        "Conv3D": (
            lambda: D.Conv3D(num_channels=2, num_filters=3, filter_size=3),
            [_f(1, 2, 4, 4, 4)],
        ),
        "Conv3DTranspose": (
            lambda: D.Conv3DTranspose(num_channels=2, num_filters=3, filter_size=3),
            [_f(1, 2, 3, 3, 3)],
        ),
        "Pool2D": (lambda: D.Pool2D(pool_size=2, pool_stride=2), [_f(1, 2, 4, 4)]),
        "Pool2D_defaults": (lambda: D.Pool2D(), [_f(1, 2, 4, 4)]),
        "Pool2D_global_avg": (
            lambda: D.Pool2D(pool_type="avg", global_pooling=True),
            [_f(1, 2, 4, 4)],
        ),
        "Pool2D_ceil": (lambda: D.Pool2D(3, "max", 2, 1, ceil_mode=True), [_f(1, 2, 5, 5)]),
        "BatchNorm": (lambda: D.BatchNorm(3), [_f(2, 3, 2, 2)]),
        "BatchNorm_2d": (lambda: D.BatchNorm(3, act="relu"), [_f(2, 3)]),
        "BatchNorm_NHWC": (lambda: D.BatchNorm(3, data_layout="NHWC"), [_f(2, 2, 2, 3)]),
        "Dropout": (lambda: D.Dropout(p=0.5), [_f(2, 4)]),
        "Dropout_upscale": (
            lambda: D.Dropout(0.0, dropout_implementation="upscale_in_train"),
            [_f(2, 4)],
        ),
        "Embedding": (lambda: D.Embedding(size=[10, 3]), [_i(10, 2, 1)]),
        "Embedding_padding": (
            lambda: D.Embedding([10, 3], is_sparse=True, padding_idx=-1),
            [_i(10, 2, 4)],
        ),
        "GRUUnit": (lambda: D.GRUUnit(size=12), [_f(2, 12), _f(2, 4)]),
        "GRUUnit_origin": (
            lambda: D.GRUUnit(12, origin_mode=True, bias_attr=False),
            [_f(2, 12), _f(2, 4)],
        ),
        "GroupNorm": (lambda: D.GroupNorm(channels=4, groups=2), [_f(2, 4, 2, 2)]),
        "InstanceNorm": (lambda: D.InstanceNorm(num_channels=3), [_f(2, 3, 2, 2)]),
        "LayerNorm": (lambda: D.LayerNorm(normalized_shape=[4]), [_f(2, 4)]),
        "LayerNorm_int": (lambda: D.LayerNorm(4, scale=False, shift=False), [_f(2, 4)]),
        "LayerNorm_2d": (lambda: D.LayerNorm([3, 4], begin_norm_axis=1), [_f(2, 3, 4)]),
        "PRelu_all": (lambda: D.PRelu(mode="all"), [_f(2, 3, 2, 2)]),
        "PRelu_channel": (lambda: D.PRelu(mode="channel", channel=3), [_f(2, 3, 2, 2)]),
        "PRelu_element": (
            lambda: D.PRelu(mode="element", input_shape=[2, 3, 2, 2]),
            [_f(2, 3, 2, 2)],
        ),
        "BilinearTensorProduct": (
            lambda: D.BilinearTensorProduct(input1_dim=3, input2_dim=4, output_dim=2),
            [_f(2, 3), _f(2, 4)],
        ),
        "SpectralNorm": (lambda: D.SpectralNorm(weight_shape=[2, 3, 4]), [_f(2, 3, 4)]),
        "SpectralNorm_dim1": (
            lambda: D.SpectralNorm([2, 3, 4], dim=1, power_iters=2),
            [_f(2, 3, 4)],
        ),
        "TreeConv": (
            lambda: D.TreeConv(feature_size=4, output_size=3),
            [_f(1, 5, 4), np.array([[[1, 2], [1, 3], [2, 4], [0, 0]]], "int32")],
        ),
        "BCELoss": (
            lambda: D.BCELoss(),
            [1.0 / (1.0 + np.exp(-_f(2, 3))), np.ones((2, 3), "float32")],
        ),
        "L1Loss": (lambda: D.L1Loss(reduction="sum"), [_f(2, 3), _f(2, 3) * 0.5]),
        "MSELoss": (lambda: D.MSELoss(), [_f(2, 3), _f(2, 3) * 0.5]),
        "NLLLoss": (lambda: D.NLLLoss(), [_f(2, 3), _i(3, 2)]),
    }
    # arguments Fluid 1.8.5 refuses (at construction or at the first call)
    c["bad_GroupNorm_indivisible"] = (lambda: D.GroupNorm(4, 3), [_f(2, 4, 2, 2)])
    c["bad_Conv2D_groups"] = (lambda: D.Conv2D(2, 3, 1, groups=3), [_f(1, 2, 3, 3)])
    c["bad_PRelu_mode"] = (lambda: D.PRelu(mode="rows"), [_f(2, 3)])
    c["bad_Pool2D_type"] = (lambda: D.Pool2D(2, pool_type="min"), [_f(1, 2, 4, 4)])
    c["bad_Dropout_p"] = (lambda: D.Dropout(p=1.5), [_f(2, 4)])
    c["bad_Linear_input"] = (lambda: D.Linear(4, 3), [_f(2, 5)])
    c["bad_Embedding_size"] = (lambda: D.Embedding(size=[10]), [_i(10, 2, 1)])
    c["bad_MSELoss_reduction"] = (lambda: D.MSELoss(reduction="avg"), [_f(2, 3), _f(2, 3)])
    xy = [_f(3, 4), _i(10, 3, 1)]
    for s in (None, 1, 9, 10, 25, 0):
        kw = {} if s is None else {"num_neg_samples": s}
        c[f"NCE_neg_{s}"] = ((lambda kw=kw: D.NCE(10, 4, **kw)), xy)
    c["NCE_two_classes"] = (lambda: D.NCE(2, 4), [_f(3, 4), _i(2, 3, 1)])
    c["NCE_bias"] = (lambda: D.NCE(10, 4, bias_attr=True), xy)
    c["NCE_log_uniform"] = (lambda: D.NCE(10, 4, sampler="log_uniform", num_neg_samples=20), xy)
    c["NCE_custom_dist"] = (
        lambda: D.NCE(3, 4, sampler="custom_dist", custom_dist=[0.2, 0.3, 0.5], num_neg_samples=7),
        [_f(3, 4), _i(3, 3, 1)],
    )
    return c


def _shape(out):
    if isinstance(out, (list, tuple)):
        return [_shape(o) for o in out]
    return [int(d) for d in out.shape]


def probe(fluid, only=None):
    facts = {}
    for name, (make, inputs) in sorted(cases(fluid).items()):
        if only is not None and name not in only:
            continue
        fact = {}
        with fluid.dygraph.guard():
            try:
                layer = make()
            except Exception as e:
                facts[name] = {"built": False, "error": type(e).__name__}
                continue
            fact["built"] = True
            fact["params"] = [[k, [int(d) for d in p.shape]] for k, p in layer.named_parameters()]
            if inputs is not None:
                try:
                    out = layer(*[fluid.dygraph.to_variable(a) for a in inputs])
                    fact["out_shape"] = _shape(out)
                except Exception as e:
                    fact["out_shape"] = None
                    fact["error"] = type(e).__name__
        facts[name] = fact
    return facts


def static_probe(fluid):
    """``fluid.dygraph.nn.RowConv`` / ``SequenceConv`` (static programs only): refused in
    dygraph mode; under program_guard, the parameters, the ops and the output on a LoD batch."""
    nn = fluid.dygraph.nn
    makers = {
        "RowConv": lambda: nn.RowConv("rc", 2, act="relu"),
        "SequenceConv": lambda: nn.SequenceConv("sc", 3),
        "SequenceConv_no_bias": lambda: nn.SequenceConv("sc", 2, filter_size=5, bias_attr=False),
    }
    facts = {}
    for name, make in sorted(makers.items()):
        with fluid.dygraph.guard():
            try:
                make()
                refused = False
            except Exception:
                refused = True
        prog, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(prog, startup), fluid.unique_name.guard():
            layer = make()
            x = fluid.data("x", [None, 3], "float32", lod_level=1)
            out = layer(x)
            params = [[p.name, list(p.shape)] for p in prog.global_block().all_parameters()]
            ops = [op.type for op in prog.global_block().ops]
        scope = fluid.Scope()
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup, scope=scope)
        for p, _ in params:
            t = scope.find_var(p).get_tensor()
            n = int(np.prod(np.array(t).shape))
            t.set(
                np.linspace(-0.5, 0.5, n).reshape(np.array(t).shape).astype("float32"),
                fluid.CPUPlace(),
            )
        xs = fluid.create_lod_tensor(_f(5, 3), [[2, 3]], fluid.CPUPlace())
        (got,) = exe.run(prog, feed={"x": xs}, fetch_list=[out], scope=scope, return_numpy=False)
        facts[name] = {
            "refused_in_dygraph": refused,
            "params": params,
            "layer_params": len(layer.parameters()),
            "ops": ops,
            "out": np.array(got).round(6).tolist(),
        }
    return facts


def main():
    import paddle.fluid as fluid

    facts = probe(fluid)
    facts["static_only"] = static_probe(fluid)
    path = os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "fluid18_dygraph_layer_args.json"
    )
    with open(path, "w") as fh:
        json.dump(facts, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
