"""oar-kernels-numba's fusions of a classifier's training step: the loss forward
(bias add + softmax + cross_entropy + mean), its gradient down to the bias (led by the
seed fill_constant), and every parameter's adam update in one step."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("oar_kernels_numba")
from oar_kernels_numba.compat import unavailable_reason

if unavailable_reason() is not None:
    pytest.skip(f"numba unavailable: {unavailable_reason()}", allow_module_level=True)

from oar import fluid
from oar.api import registries
from oar.executor.plan import Plan
from oar.fusion import ENV_DISABLE
from oar_kernels_numba.adam_group import make_adam_group
from oar_kernels_numba.loss_fusions import (
    _unfused_loss,
    _unfused_loss_grad,
    make_loss_grad,
    make_softmax_loss,
)

rng = np.random.default_rng(31)
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-13)}


class _Op:
    def __init__(self, attrs, inputs, outputs):
        self.attrs, self.inputs, self.outputs = attrs, inputs, outputs

    def input(self, slot):
        return self.inputs.get(slot, [])

    def output(self, slot):
        return self.outputs.get(slot, [])


def _loss_ops(ignore=-100):
    return [
        _Op({"axis": 1}, {"X": ["a"], "Y": ["b"]}, {"Out": ["z"]}),
        _Op({"axis": -1}, {"X": ["z"]}, {"Out": ["p"]}),
        _Op(
            {"soft_label": False, "ignore_index": ignore},
            {"X": ["p"], "Label": ["l"]},
            {"Y": ["c"]},
        ),
        _Op({}, {"X": ["c"]}, {"Out": ["m"]}),
    ]


def _attrs(ops):
    return {str(k): op.attrs for k, op in enumerate(ops)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ignore", [-100, 2])
def test_the_loss_forward_matches_the_four_kernels(dtype, ignore):
    ops = _loss_ops(ignore)
    fused = make_softmax_loss("cpu")(ops, None)
    x = (rng.standard_normal((37, 10)) * 4).astype(dtype)
    ins = {"0.X": x, "0.Y": rng.standard_normal(10).astype(dtype),
           "2.Label": rng.integers(0, 10, (37, 1))}  # fmt: skip
    got = fused(dict(ins), _attrs(ops))
    want = _unfused_loss(dict(ins), _attrs(ops), "cpu")
    assert sorted(got) == sorted(want) == ["0.Out", "1.Out", "2.Y", "3.Out"]
    np.testing.assert_array_equal(got["0.Out"], want["0.Out"])  # the bias add: bit for bit
    for slot in ("1.Out", "2.Y", "3.Out"):
        assert got[slot].shape == want[slot].shape and got[slot].dtype == np.dtype(dtype)
        np.testing.assert_allclose(got[slot], want[slot], **TOL[dtype])
    ignored = ins["2.Label"].reshape(-1) == ignore
    assert (got["2.Y"].reshape(-1)[ignored] == 0).all()


def test_the_loss_forward_raises_the_kernel_error_for_a_bad_label():
    ops = _loss_ops()
    fused = make_softmax_loss("cpu")(ops, None)
    ins = {"0.X": np.zeros((3, 4), "float32"), "0.Y": np.zeros(4, "float32"),
           "2.Label": np.array([[1], [7], [0]])}  # fmt: skip
    with pytest.raises(ValueError, match="outside"):
        fused(ins, _attrs(ops))


def test_the_loss_forward_declines_soft_labels_and_other_tensors():
    ops = _loss_ops()
    ops[2].attrs = {"soft_label": True, "ignore_index": -100}
    assert make_softmax_loss("cpu")(ops, None) is None
    ops = _loss_ops()
    ops[2].inputs["X"] = ["other"]
    assert make_softmax_loss("cpu")(ops, None) is None


def _grad_ops(lead, ignore=-100):
    ops = [
        _Op({}, {"X": ["c"], "Out@GRAD": ["m@G"]}, {"X@GRAD": ["c@G"]}),
        _Op(
            {"soft_label": False, "ignore_index": ignore},
            {"X": ["p"], "Label": ["l"]},
            {"X@GRAD": ["p@G"]},
        ),  # fmt: skip
        _Op({"axis": -1}, {"Out": ["p"], "Out@GRAD": ["p@G"]}, {"X@GRAD": ["z@G"]}),
        _Op({"axis": 1}, {"X": ["a"], "Y": ["b"]}, {"X@GRAD": ["a@G"], "Y@GRAD": ["b@G"]}),
    ]
    if lead:
        fill = {"shape": [1], "dtype": "float32", "value": 1.0, "str_value": ""}
        ops.insert(0, _Op(fill, {}, {"Out": ["m@G"]}))
    return ops


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lead", [0, 1], ids=["fed-seed", "fill-constant-seed"])
def test_the_loss_gradient_down_to_the_bias(dtype, lead):
    ops = _grad_ops(lead, ignore=4)
    fused = make_loss_grad("cpu", lead, bias=True)(ops, None)
    z = rng.standard_normal((50, 10))
    p = np.exp(z - z.max(1, keepdims=True))
    p = (p / p.sum(1, keepdims=True)).astype(dtype)
    k = str(lead)
    ins = {f"{k}.X": np.zeros((50, 1), dtype), f"{lead + 1}.X": p,
           f"{lead + 1}.Label": rng.integers(0, 10, (50, 1)), f"{lead + 2}.Out": p,
           f"{lead + 3}.X": np.zeros_like(p), f"{lead + 3}.Y": np.zeros(10, dtype)}  # fmt: skip
    if not lead:
        ins["0.Out@GRAD"] = np.ones(1, dtype)
    got = fused(dict(ins), _attrs(ops))
    want = _unfused_loss_grad(dict(ins), _attrs(ops), "cpu", lead, True)
    assert sorted(got) == sorted(want)
    b = str(lead + 3)
    np.testing.assert_array_equal(got[f"{b}.X@GRAD"], want[f"{b}.X@GRAD"])
    np.testing.assert_allclose(got[f"{b}.Y@GRAD"], want[f"{b}.Y@GRAD"], **TOL[dtype])
    np.testing.assert_allclose(got[f"{b}.Y@GRAD"], got[f"{b}.X@GRAD"].sum(axis=0), **TOL[dtype])
    assert got[f"{b}.Y@GRAD"].dtype == np.dtype(dtype)


def _adam_op(k, beta1=0.9, beta2=0.999, eps=1e-8):
    ins = {s: [f"{s}{k}"] for s in ("Param", "Grad", "Moment1", "Moment2", "Beta1Pow",
                                     "Beta2Pow", "LearningRate")}  # fmt: skip
    outs = {s: [f"{s}{k}"] for s in ("ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut",
                                      "Beta2PowOut")}  # fmt: skip
    attrs = {"beta1": beta1, "beta2": beta2, "epsilon": eps, "lazy_mode": False,
             "min_row_size_to_use_multithread": 1000}  # fmt: skip
    return _Op(attrs, ins, outs)


def _adam_inputs(shape, dtype, t=3):
    p = rng.standard_normal(shape).astype(dtype)
    return {
        "Param": p,
        "Grad": rng.standard_normal(shape).astype(dtype),
        "Moment1": (rng.standard_normal(shape) * 0.1).astype(dtype),
        "Moment2": rng.random(shape).astype(dtype) * 0.01,
        "Beta1Pow": np.array([0.9**t], "float32"),
        "Beta2Pow": np.array([0.999**t], "float32"),
        "LearningRate": np.array([0.01], "float32"),
    }


def test_the_adam_run_updates_every_parameter_as_the_adam_kernel_does():
    shapes = [(10,), (64, 48), (300,), (7, 5), (513,)]
    dtypes = ["float32", "float64", "float32", "float32", "float64"]
    ops = [_adam_op(k, beta1=0.8 + 0.02 * k) for k in range(len(shapes))]
    fused = make_adam_group("cpu")(ops, None)
    per_op = [_adam_inputs(s, d) for s, d in zip(shapes, dtypes)]
    per_op[3]["Grad"] = np.asfortranarray(per_op[3]["Grad"])  # not C order: the kernel's path
    ins = {f"{k}.{s}": v.copy() for k, d in enumerate(per_op) for s, v in d.items()}
    got = fused(ins, _attrs(ops))
    entry = registries().kernels.lookup("adam", "cpu", "float32")
    for k, d in enumerate(per_op):
        want = entry.kernel({s: v.copy() for s, v in d.items()}, ops[k].attrs)
        for slot, v in want.items():
            np.testing.assert_array_equal(got[f"{k}.{slot}"], v, err_msg=f"{k}.{slot}")
            assert got[f"{k}.{slot}"].dtype == v.dtype
        assert got[f"{k}.ParamOut"] is ins[f"{k}.Param"]  # updated in place, as the kernel does


def test_an_adam_run_with_beta_tensors_is_declined():
    ops = [_adam_op(0), _adam_op(1)]
    ops[1].inputs["Beta1Tensor"] = ["b1t"]
    assert make_adam_group("cpu")(ops, None) is None


def _classifier():
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 12
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 32], "float32")
        y = fluid.data("y", [None, 1], "int64")
        h = fluid.layers.fc(x, 80, act="relu")
        pred = fluid.layers.fc(h, 10, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, y))
        fluid.optimizer.Adam(0.01).minimize(loss)
    return main, start, loss


def test_a_classifier_step_is_fused_end_to_end_and_trains_the_same(monkeypatch):
    main, start, loss = _classifier()
    plan = Plan(main, ("x", "y"), (loss.name,), registries().devices.get("cpu"))
    types = [s.op.type for s in plan.steps]
    for name in ("softmax_cross_entropy_mean", "seeded_loss_bias_grad", "adam_group"):
        assert types.count(f"fused[{name}]") == 1, types
    assert "adam" not in types and "softmax" not in types
    r = np.random.default_rng(5)
    feed = {"x": r.standard_normal((64, 32)).astype("float32"), "y": r.integers(0, 10, (64, 1))}

    def train(prog):
        exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
        exe.run(start, scope=scope)
        losses = [exe.run(prog, feed=feed, fetch_list=[loss], scope=scope)[0] for _ in range(5)]
        return losses, np.asarray(scope.find_var("fc_1.w_0").get_tensor()).copy()

    fused, w_fused = train(main)
    monkeypatch.setenv(ENV_DISABLE, "1")
    unfused, w_unfused = train(main.clone())
    np.testing.assert_allclose(np.ravel(fused), np.ravel(unfused), rtol=1e-5)
    np.testing.assert_allclose(w_fused, w_unfused, rtol=1e-4, atol=1e-6)


def test_an_adam_run_with_a_sparse_gradient_trains_the_same(monkeypatch):
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 13
    with fluid.program_guard(main, start):
        ids = fluid.data("ids", [None, 1], "int64")
        emb = fluid.layers.embedding(ids, size=[50, 16], is_sparse=True)
        loss = fluid.layers.mean(fluid.layers.fc(emb, 4))
        fluid.optimizer.Adam(0.05).minimize(loss)
    plan = Plan(main, ("ids",), (loss.name,), registries().devices.get("cpu"))
    types = [s.op.type for s in plan.steps]
    assert "fused[adam_group]" in types and "adam" not in types  # the SelectedRows one too
    feed = {"ids": np.random.default_rng(6).integers(0, 50, (32, 1))}

    def train(prog):
        exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
        exe.run(start, scope=scope)
        for _ in range(4):
            exe.run(prog, feed=feed, fetch_list=[loss], scope=scope)
        return [np.asarray(scope.find_var(n).get_tensor()).copy() for n in sorted(
            p.name for p in prog.global_block().all_parameters())]  # fmt: skip

    fused = train(main)
    monkeypatch.setenv(ENV_DISABLE, "1")
    unfused = train(main.clone())
    for a, b in zip(fused, unfused):
        np.testing.assert_array_equal(a, b)
