"""Optimizer update ops against numpy references of Fluid 1.8's formulas.

Three levels: one op call (``CASES``), a one-op program fed a SelectedRows
gradient (sparse updates equal the dense update of the densified gradient,
as Fluid computes them), and several ``minimize`` steps of each optimizer
class on a small least-squares problem.

The update ops write into their inputs in place, so every run here feeds
copies and the references get the pristine arrays.
"""

import copy

import attrs
import numpy as np
import pytest
from oar import fluid
from oar.lod_tensor import SelectedRows
from oar.testing import OpCase, run_forward

rng = np.random.default_rng(7)


def r(*shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype("float32")


def _lr(LearningRate):
    return float(np.asarray(LearningRate).reshape(-1)[0])


# --- numpy references (pure: they never modify their arguments) ----------------------------------------
def ref_momentum(Param, Grad, Velocity, LearningRate, mu=0.0, use_nesterov=False):
    v = mu * Velocity + Grad
    step = (Grad + mu * v) if use_nesterov else v
    return {"ParamOut": Param - _lr(LearningRate) * step, "VelocityOut": v}


def ref_lars_momentum(
    Param, Grad, Velocity, LearningRate, mu=0.0, lars_coeff=0.001, lars_weight_decay=0.0005
):
    pn, gn = np.linalg.norm(Param), np.linalg.norm(Grad)
    lr = _lr(LearningRate)
    local = lr * lars_coeff * pn / (gn + lars_weight_decay * pn) if pn > 0 and gn > 0 else lr
    v = mu * Velocity + local * (Grad + lars_weight_decay * Param)
    return {"ParamOut": Param - v, "VelocityOut": v}


def ref_adagrad(Param, Grad, Moment, LearningRate, epsilon=1e-6):
    m = Moment + Grad * Grad
    return {"ParamOut": Param - _lr(LearningRate) * Grad / (np.sqrt(m) + epsilon), "MomentOut": m}


def ref_decayed_adagrad(Param, Grad, Moment, LearningRate, decay=0.95, epsilon=1e-6):
    m = decay * Moment + (1 - decay) * Grad * Grad
    return {"ParamOut": Param - _lr(LearningRate) * Grad / (np.sqrt(m) + epsilon), "MomentOut": m}


def ref_rmsprop(
    Param,
    Grad,
    Moment,
    MeanSquare,
    LearningRate,
    MeanGrad=None,
    epsilon=1e-10,
    decay=0.9,
    momentum=0.0,
    centered=False,
):
    ms = decay * MeanSquare + (1 - decay) * Grad * Grad
    out = {"MeanSquareOut": ms}
    if centered:
        mg = decay * MeanGrad + (1 - decay) * Grad
        denom = np.sqrt(ms - mg * mg + epsilon)
        out["MeanGradOut"] = mg
    else:
        denom = np.sqrt(ms + epsilon)
    mom = momentum * Moment + _lr(LearningRate) * Grad / denom
    out.update(ParamOut=Param - mom, MomentOut=mom)
    return out


def ref_adamax(
    Param, Grad, LearningRate, Moment, InfNorm, Beta1Pow, beta1=0.9, beta2=0.999, epsilon=1e-8
):
    m = beta1 * Moment + (1 - beta1) * Grad
    u = np.maximum(beta2 * InfNorm + epsilon, np.abs(Grad))
    lr_t = _lr(LearningRate) / (1 - float(np.asarray(Beta1Pow).reshape(-1)[0]))
    return {"ParamOut": Param - lr_t * m / u, "MomentOut": m, "InfNormOut": u}


def ref_adadelta(Param, Grad, AvgSquaredGrad, AvgSquaredUpdate, rho=0.95, epsilon=1e-6):
    asg = rho * AvgSquaredGrad + (1 - rho) * Grad * Grad
    u = -np.sqrt((AvgSquaredUpdate + epsilon) / (asg + epsilon)) * Grad
    asu = rho * AvgSquaredUpdate + (1 - rho) * u * u
    # Fluid 1.8 applies the step with the already-updated E[u²] (its lazy Eigen expression)
    p = Param - np.sqrt((asu + epsilon) / (asg + epsilon)) * Grad
    return {"ParamOut": p, "AvgSquaredGradOut": asg, "AvgSquaredUpdateOut": asu}


def ref_ftrl(
    Param, Grad, SquaredAccumulator, LinearAccumulator, LearningRate, l1=0.0, l2=0.0, lr_power=-0.5
):
    lr, sq = _lr(LearningRate), SquaredAccumulator
    new_sq = sq + Grad * Grad
    if lr_power == -0.5:
        lin = LinearAccumulator + Grad - (np.sqrt(new_sq) - np.sqrt(sq)) / lr * Param
        y = np.sqrt(new_sq) / lr + l2
    else:
        lin = LinearAccumulator + Grad - (new_sq**-lr_power - sq**-lr_power) / lr * Param
        y = new_sq**-lr_power / lr
    p = np.where(np.abs(lin) > l1, (l1 * np.sign(lin) - lin) / y, 0.0)
    return {"ParamOut": p, "SquaredAccumOut": new_sq, "LinearAccumOut": lin}


def ref_lamb(
    Param,
    Grad,
    LearningRate,
    Moment1,
    Moment2,
    Beta1Pow,
    Beta2Pow,
    weight_decay=0.01,
    beta1=0.9,
    beta2=0.999,
    epsilon=1e-6,
):
    m1 = beta1 * Moment1 + (1 - beta1) * Grad
    m2 = beta2 * Moment2 + (1 - beta2) * Grad * Grad
    rr = m1 / (np.sqrt(m2) + epsilon) + weight_decay * Param
    pn, rn = np.linalg.norm(Param), np.linalg.norm(rr)
    ratio = pn / rn if pn > 0 and rn > 0 else 1.0
    return {"ParamOut": Param - _lr(LearningRate) * ratio * rr, "Moment1Out": m1, "Moment2Out": m2}


def ref_adam(
    Param,
    Grad,
    LearningRate,
    Moment1,
    Moment2,
    Beta1Pow,
    Beta2Pow,
    beta1=0.9,
    beta2=0.999,
    epsilon=1e-8,
    lazy_mode=False,
):
    b1, b2 = float(np.float32(beta1)), float(np.float32(beta2))
    m1 = b1 * Moment1 + (1 - b1) * Grad
    m2 = b2 * Moment2 + (1 - b2) * Grad * Grad
    b1p, b2p = (
        float(np.asarray(Beta1Pow).reshape(-1)[0]),
        float(np.asarray(Beta2Pow).reshape(-1)[0]),
    )
    lr_t = _lr(LearningRate) * np.sqrt(1 - b2p) / (1 - b1p)
    return {
        "ParamOut": Param - lr_t * m1 / (np.sqrt(m2) + epsilon),
        "Moment1Out": m1,
        "Moment2Out": m2,
        "Beta1PowOut": Beta1Pow * b1,
        "Beta2PowOut": Beta2Pow * b2,
    }


def ref_average_accumulates(
    param,
    in_sum_1,
    in_sum_2,
    in_sum_3,
    in_num_accumulates,
    in_old_num_accumulates,
    in_num_updates,
    average_window=0.0,
    max_average_window=2**63 - 1,
    min_average_window=10000,
):
    n_upd, n_acc, old = (
        int(in_num_updates[0]) + 1,
        int(in_num_accumulates[0]) + 1,
        int(in_old_num_accumulates[0]),
    )
    s1, s2, s3 = in_sum_1 + param, in_sum_2, in_sum_3
    if n_upd % 16384 == 0:
        s1, s2 = np.zeros_like(s1), s2 + s1
    if n_acc >= min_average_window and n_acc >= min(
        max_average_window, int(n_upd * average_window)
    ):
        s1, s2, s3, old, n_acc = np.zeros_like(s1), np.zeros_like(s2), s1 + s2, n_acc, 0
    i64 = lambda v: np.array([v], "int64")
    return {
        "out_sum_1": s1,
        "out_sum_2": s2,
        "out_sum_3": s3,
        "out_num_accumulates": i64(n_acc),
        "out_old_num_accumulates": i64(old),
        "out_num_updates": i64(n_upd),
    }


REFS = {
    "momentum": ref_momentum,
    "lars_momentum": ref_lars_momentum,
    "adagrad": ref_adagrad,
    "decayed_adagrad": ref_decayed_adagrad,
    "rmsprop": ref_rmsprop,
    "adamax": ref_adamax,
    "adadelta": ref_adadelta,
    "ftrl": ref_ftrl,
    "lamb": ref_lamb,
    "adam": ref_adam,
}


# --- one op call ------------------------------------------------------------------------------------------
def _ins(op, shape=(3, 4)):
    p, g, lr = r(*shape), r(*shape), np.array([0.1], "float32")
    pos = lambda: r(*shape, low=0.1, high=1.0)
    state = {
        "momentum": {"Velocity": r(*shape)},
        "lars_momentum": {"Velocity": r(*shape)},
        "adagrad": {"Moment": pos()},
        "decayed_adagrad": {"Moment": pos()},
        "rmsprop": {
            "Moment": r(*shape),
            "MeanSquare": pos() + 1.0,
            "MeanGrad": r(*shape, low=-0.1, high=0.1),
        },
        "adamax": {
            "Moment": r(*shape),
            "InfNorm": pos(),
            "Beta1Pow": np.array([0.9**3], "float32"),
        },
        "adadelta": {"AvgSquaredGrad": pos(), "AvgSquaredUpdate": pos()},
        "ftrl": {"SquaredAccumulator": pos(), "LinearAccumulator": r(*shape)},
        "lamb": {
            "Moment1": r(*shape),
            "Moment2": pos(),
            "Beta1Pow": np.array([0.9], "float32"),
            "Beta2Pow": np.array([0.999], "float32"),
        },
    }[op]
    ins = {"Param": p, "Grad": g, **state}
    if op != "adadelta":
        ins["LearningRate"] = lr
    return ins


def _ref_of(op):
    def ref(**kw):
        return REFS[op](**kw)

    return ref


CASES = [
    OpCase("momentum", _ins("momentum"), {"mu": 0.9}, ref=_ref_of("momentum")),
    OpCase(
        "momentum",
        _ins("momentum"),
        {"mu": 0.9, "use_nesterov": True},
        ref=_ref_of("momentum"),
        name="nesterov",
    ),
    OpCase(
        "lars_momentum",
        _ins("lars_momentum"),
        {"mu": 0.9, "lars_coeff": 0.01, "lars_weight_decay": 0.001},
        ref=_ref_of("lars_momentum"),
    ),
    OpCase("adagrad", _ins("adagrad"), {"epsilon": 1e-6}, ref=_ref_of("adagrad")),
    OpCase(
        "decayed_adagrad", _ins("decayed_adagrad"), {"decay": 0.9}, ref=_ref_of("decayed_adagrad")
    ),
    OpCase(
        "rmsprop",
        _ins("rmsprop"),
        {"decay": 0.9, "momentum": 0.5},
        ref=_ref_of("rmsprop"),
        outputs={"ParamOut": 1, "MomentOut": 1, "MeanSquareOut": 1, "MeanGradOut": 0},
    ),
    OpCase(
        "rmsprop",
        _ins("rmsprop"),
        {"decay": 0.9, "momentum": 0.5, "centered": True},
        ref=_ref_of("rmsprop"),
        name="centered",
    ),
    OpCase("adamax", _ins("adamax"), {"beta1": 0.9, "beta2": 0.99}, ref=_ref_of("adamax")),
    OpCase("adadelta", _ins("adadelta"), {"rho": 0.9, "epsilon": 1e-6}, ref=_ref_of("adadelta")),
    OpCase("ftrl", _ins("ftrl"), {"l1": 0.05, "l2": 0.1}, ref=_ref_of("ftrl")),
    OpCase(
        "ftrl",
        _ins("ftrl"),
        {"l1": 0.05, "l2": 0.1, "lr_power": -0.3},
        ref=_ref_of("ftrl"),
        name="lr_power",
    ),
    OpCase("lamb", _ins("lamb"), {"weight_decay": 0.01}, ref=_ref_of("lamb")),
]


def _avg_ins(n_acc, n_upd):
    return {
        "param": r(2, 3),
        "in_sum_1": r(2, 3),
        "in_sum_2": r(2, 3),
        "in_sum_3": r(2, 3),
        "in_num_accumulates": np.array([n_acc], "int64"),
        "in_old_num_accumulates": np.array([4], "int64"),
        "in_num_updates": np.array([n_upd], "int64"),
    }


for _name, _ins_avg, _attrs in [
    (
        "accumulate",
        _avg_ins(1, 5),
        {"average_window": 0.5, "min_average_window": 3, "max_average_window": 10},
    ),
    (
        "window_restart",
        _avg_ins(2, 5),
        {"average_window": 0.5, "min_average_window": 3, "max_average_window": 10},
    ),
    (
        "spill",
        _avg_ins(6, 16383),
        {"average_window": 0.5, "min_average_window": 100, "max_average_window": 10**6},
    ),
]:
    CASES.append(
        OpCase("average_accumulates", _ins_avg, _attrs, ref=ref_average_accumulates, name=_name)
    )


@pytest.mark.parametrize("case", CASES, ids=str)
def test_update_op(case):
    fed = attrs.evolve(case, inputs=copy.deepcopy(case.inputs))
    got = run_forward(fed)
    pristine = copy.deepcopy(case.inputs)
    expected = case.ref(
        **{k: v.astype("float64") if v.dtype.kind == "f" else v for k, v in pristine.items()},
        **case.attrs,
    )
    for slot, exp in expected.items():
        if slot not in got:
            continue
        np.testing.assert_allclose(
            got[slot][0], exp, rtol=1e-5, atol=1e-6, err_msg=f"{case}: {slot}"
        )


# --- SelectedRows gradients -------------------------------------------------------------------------------
SPARSE_OPS = [
    ("sgd", {}),
    ("momentum", {"mu": 0.9}),
    ("adagrad", {}),
    ("rmsprop", {"decay": 0.9}),
    ("decayed_adagrad", {}),
    ("adamax", {}),
    ("ftrl", {"l1": 0.01}),
    ("lamb", {}),
    ("lars_momentum", {"mu": 0.9}),
    ("adadelta", {}),
    ("adam", {}),
]


def _run_sparse(op, attrs_, ins, grad):
    """One op in a program whose inputs all come from the scope; Grad holds a SelectedRows value."""
    main = fluid.Program()
    scope = fluid.Scope()
    block = main.global_block()
    names = {}
    for slot, arr in ins.items():
        v = block.create_var(name=slot.lower(), shape=arr.shape, dtype="float32", persistable=True)
        scope.var(v.name).value = fluid.LoDTensor(arr.copy())
        names[slot] = [v]
    g = block.create_var(
        name="grad", shape=ins["Param"].shape, dtype="float32", type="selected_rows"
    )
    scope.var("grad").value = grad
    names["Grad"] = [g]
    outs = {s: [names[s[:-3]][0]] for s in ("ParamOut",)}
    block.append_op(op, names, outs, attrs_)
    fluid.Executor(fluid.CPUPlace()).run(main, scope=scope)
    return np.array(scope.find_var("param").value)


@pytest.mark.parametrize("op,attrs_", SPARSE_OPS, ids=[o for o, _ in SPARSE_OPS])
def test_selected_rows_grad_equals_dense_update(op, attrs_):
    if op == "sgd":
        ins = {"Param": r(6, 3), "LearningRate": np.array([0.1], "float32")}
    elif op == "adam":
        ins = {
            "Param": r(6, 3),
            "LearningRate": np.array([0.1], "float32"),
            "Moment1": r(6, 3),
            "Moment2": r(6, 3, low=0.1),
            "Beta1Pow": np.array([0.9], "float32"),
            "Beta2Pow": np.array([0.999], "float32"),
        }
    else:
        ins = _ins(op, (6, 3))
        ins.pop("Grad")
    rows = np.array([4, 1, 4], "int64")  # row 4 twice: its gradients add up
    value = r(3, 3)
    grad = SelectedRows(rows, 6, value)
    got = _run_sparse(op, attrs_, ins, grad)
    dense = grad.to_dense().astype("float64")
    if op == "sgd":
        expected = ins["Param"] - 0.1 * dense
    else:
        expected = REFS[op](
            Grad=dense, **{k: v.astype("float64") for k, v in ins.items()}, **attrs_
        )["ParamOut"]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    if op in ("adagrad", "sgd"):
        untouched = [0, 2, 3, 5]
        np.testing.assert_array_equal(got[untouched], ins["Param"][untouched])
