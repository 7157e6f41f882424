"""numpy kernels of the optimizer update ops; each writes into the parameter and state arrays in place.

Ops without ``selected_rows=True`` get SelectedRows gradients densified by the
executor, which is the same update Fluid's sparse functors compute (rows absent
from the gradient see a zero gradient). Adagrad updates only the rows present,
because a zero gradient leaves both its moment and its parameter unchanged.
"""

from __future__ import annotations

import numpy as np
from oar.api import SelectedRows

from oar_kernels_cpu.kernels import FLOATS, _split, array_module, kernel
from oar_kernels_cpu.kernels._util import merge_rows

xp = array_module(__name__)


def _lr(inputs) -> float:
    return float(inputs["LearningRate"].reshape(-1)[0])


@kernel("momentum", FLOATS)
def momentum(inputs, attrs):
    p, g, v = inputs["Param"], inputs["Grad"], inputs["Velocity"]
    lr, mu, nesterov = _lr(inputs), attrs["mu"], attrs["use_nesterov"]

    def update(p, g, v):
        v *= mu
        v += g
        if nesterov:
            p -= lr * (g + mu * v)
        else:
            p -= lr * v

    if not _split.each_piece(xp, update, p, g, v):  # large: in flat pieces on the pool
        update(p, g, v)
    return {"ParamOut": p, "VelocityOut": v}


@kernel("lars_momentum", FLOATS)
def lars_momentum(inputs, attrs):
    p, g, v = inputs["Param"], inputs["Grad"], inputs["Velocity"]
    lr, mu, coeff, wd = _lr(inputs), attrs["mu"], attrs["lars_coeff"], attrs["lars_weight_decay"]
    p_norm = float(xp.sqrt(xp.sum(xp.square(p, dtype=np.float64))))
    g_norm = float(xp.sqrt(xp.sum(xp.square(g, dtype=np.float64))))
    local_lr = lr
    if p_norm > 0 and g_norm > 0:
        local_lr = lr * coeff * p_norm / (g_norm + wd * p_norm)
    v *= mu
    v += local_lr * (g + wd * p)
    p -= v
    return {"ParamOut": p, "VelocityOut": v}


@kernel("adagrad", FLOATS, selected_rows=True)
def adagrad(inputs, attrs):
    p, g, m = inputs["Param"], inputs["Grad"], inputs["Moment"]
    lr, eps = _lr(inputs), attrs["epsilon"]
    if isinstance(g, SelectedRows):
        rows, gv = merge_rows(xp, g)
        m[rows] += gv * gv
        p[rows] -= lr * gv / (xp.sqrt(m[rows]) + eps)
    else:
        m += g * g
        p -= lr * g / (xp.sqrt(m) + eps)
    return {"ParamOut": p, "MomentOut": m}


@kernel("decayed_adagrad", FLOATS)
def decayed_adagrad(inputs, attrs):
    p, g, m = inputs["Param"], inputs["Grad"], inputs["Moment"]
    lr, decay, eps = _lr(inputs), attrs["decay"], attrs["epsilon"]
    m *= decay
    m += (1 - decay) * (g * g)
    p -= lr * g / (xp.sqrt(m) + eps)
    return {"ParamOut": p, "MomentOut": m}


@kernel("rmsprop", FLOATS, wants_outputs=True)
def rmsprop(inputs, attrs, wanted=frozenset()):
    p, g = inputs["Param"], inputs["Grad"]
    ms, mom = inputs["MeanSquare"], inputs["Moment"]
    lr, rho, eps, mu = _lr(inputs), attrs["decay"], attrs["epsilon"], attrs["momentum"]
    ms *= rho
    ms += (1 - rho) * (g * g)
    out = {"ParamOut": p, "MomentOut": mom, "MeanSquareOut": ms}
    if attrs["centered"]:
        mg = inputs.get("MeanGrad")
        if mg is None:
            raise ValueError("rmsprop: centered=True needs the MeanGrad input")
        mg *= rho
        mg += (1 - rho) * g
        denom = xp.sqrt(ms - mg * mg + eps)
        out["MeanGradOut"] = mg
    else:
        denom = xp.sqrt(ms + eps)
    mom *= mu
    mom += lr * g / denom
    p -= mom
    return out


@kernel("adamax", FLOATS)
def adamax(inputs, attrs):
    p, g = inputs["Param"], inputs["Grad"]
    m, inf = inputs["Moment"], inputs["InfNorm"]
    b1, b2, eps = attrs["beta1"], attrs["beta2"], attrs["epsilon"]
    b1pow = float(inputs["Beta1Pow"].reshape(-1)[0])
    m *= b1
    m += (1 - b1) * g
    inf *= b2
    inf += eps
    xp.maximum(inf, xp.abs(g), out=inf)
    p -= (_lr(inputs) / (1 - b1pow)) * (m / inf)
    return {"ParamOut": p, "MomentOut": m, "InfNormOut": inf}


@kernel("adadelta", FLOATS)
def adadelta(inputs, attrs):
    p, g = inputs["Param"], inputs["Grad"]
    asg, asu = inputs["AvgSquaredGrad"], inputs["AvgSquaredUpdate"]
    rho, eps = attrs["rho"], attrs["epsilon"]
    asg *= rho
    asg += (1 - rho) * (g * g)
    update = -xp.sqrt((asu + eps) / (asg + eps)) * g
    asu *= rho
    asu += (1 - rho) * (update * update)
    # Fluid 1.8 evaluates ``update`` lazily after AvgSquaredUpdate was overwritten in
    # place, so the step applied uses the new E[u²]; we reproduce its numbers.
    p -= xp.sqrt((asu + eps) / (asg + eps)) * g
    return {"ParamOut": p, "AvgSquaredGradOut": asg, "AvgSquaredUpdateOut": asu}


@kernel("ftrl", FLOATS)
def ftrl(inputs, attrs):
    p, g = inputs["Param"], inputs["Grad"]
    sq, lin = inputs["SquaredAccumulator"], inputs["LinearAccumulator"]
    lr, l1, l2, power = _lr(inputs), attrs["l1"], attrs["l2"], attrs["lr_power"]
    new_sq = sq + g * g
    if power == -0.5:
        lin += g - (xp.sqrt(new_sq) - xp.sqrt(sq)) / lr * p
        y = xp.sqrt(new_sq) / lr + l2
    else:
        lin += g - (xp.power(new_sq, -power) - xp.power(sq, -power)) / lr * p
        y = xp.power(new_sq, -power) / lr  # Fluid 1.8 adds no l2 term on this branch
    x = l1 * xp.sign(lin) - lin
    # y is 0 only where |lin| <= l1 (masked out): divide by 1 there instead of warning
    p[...] = xp.where(xp.abs(lin) > l1, x / xp.where(y == 0, 1, y), 0.0)
    sq[...] = new_sq
    return {"ParamOut": p, "SquaredAccumOut": sq, "LinearAccumOut": lin}


@kernel("lamb", FLOATS)
def lamb(inputs, attrs):
    p, g = inputs["Param"], inputs["Grad"]
    m1, m2 = inputs["Moment1"], inputs["Moment2"]
    b1, b2, eps, wd = attrs["beta1"], attrs["beta2"], attrs["epsilon"], attrs["weight_decay"]
    m1 *= b1
    m1 += (1 - b1) * g
    m2 *= b2
    m2 += (1 - b2) * (g * g)
    # Fluid 1.8's lamb has no bias correction (Beta1Pow/Beta2Pow are read, never used)
    r = m1 / (xp.sqrt(m2) + eps) + wd * p
    p_norm = float(xp.sqrt(xp.sum(xp.square(p, dtype=np.float64))))
    r_norm = float(xp.sqrt(xp.sum(xp.square(r, dtype=np.float64))))
    ratio = p_norm / r_norm if p_norm > 0 and r_norm > 0 else 1.0
    p -= (_lr(inputs) * ratio) * r
    return {"ParamOut": p, "Moment1Out": m1, "Moment2Out": m2}


_MAX_NUM_ACCUMULATES = 16384


@kernel("average_accumulates", FLOATS)
def average_accumulates(inputs, attrs):
    """ModelAverage's sums: sum_1 collects params, spills to sum_2, and restarts into sum_3 per window."""
    p = inputs["param"]
    s1, s2, s3 = inputs["in_sum_1"], inputs["in_sum_2"], inputs["in_sum_3"]
    num_acc, old_num_acc, num_upd = (
        inputs["in_num_accumulates"],
        inputs["in_old_num_accumulates"],
        inputs["in_num_updates"],
    )
    num_upd += 1
    num_acc += 1
    s1 += p
    n_upd, n_acc = int(num_upd.reshape(-1)[0]), int(num_acc.reshape(-1)[0])
    if n_upd % _MAX_NUM_ACCUMULATES == 0:
        s2 += s1
        s1[...] = 0
    window = min(attrs["max_average_window"], int(n_upd * attrs["average_window"]))
    if n_acc >= attrs["min_average_window"] and n_acc >= window:
        s3[...] = s1 + s2
        s1[...] = 0
        s2[...] = 0
        old_num_acc[...] = n_acc
        num_acc[...] = 0
    return {
        "out_sum_1": s1,
        "out_sum_2": s2,
        "out_sum_3": s3,
        "out_num_accumulates": num_acc,
        "out_old_num_accumulates": old_num_acc,
        "out_num_updates": num_upd,
    }
