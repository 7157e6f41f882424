"""nce: sample negatives, sigmoid scores of the sampled rows of W, NCE cost and gradients.

The per-sample products (a row of X against its sampled rows of W) run as one batched product
through :mod:`._gemm` (oar's thread settings, ``FLAGS_cpu_deterministic``)."""

from __future__ import annotations

import math

from oar_kernels_cpu.kernels import FLOATS, _gemm, array_module, kernel
from oar_kernels_cpu.kernels._util import rng_for, scatter_add

xp = array_module(__name__)


def _q(inputs, attrs, classes):
    """The sampler's probability of each class id."""
    c = attrs["num_total_classes"]
    if attrs["sampler"] == 1:  # log-uniform (Zipf)
        k = classes.astype("float64")
        return xp.log((k + 2.0) / (k + 1.0)) / math.log(c + 1.0)
    if attrs["sampler"] == 2:
        return xp.asarray(inputs["CustomDistProbs"]).reshape(-1)[classes].astype("float64")
    return xp.full(classes.shape, 1.0 / c)


def _sample(inputs, attrs, n):
    s, c = attrs["num_neg_samples"], attrs["num_total_classes"]
    if attrs["custom_neg_classes"]:
        neg = xp.asarray(attrs["custom_neg_classes"], dtype="int64")[:s]
        return xp.broadcast_to(neg, (n, s))
    rng = rng_for(xp, attrs["seed"])
    if attrs["sampler"] == 1:
        # inverse CDF of P(k) = log((k + 2) / (k + 1)) / log(c + 1)
        u = rng.random((n, s))
        return xp.minimum(xp.floor(xp.exp(u * math.log(c + 1.0))) - 1, c - 1).astype("int64")
    if attrs["sampler"] == 2:
        p = xp.asarray(inputs["CustomDistProbs"]).reshape(-1).astype("float64")
        return rng.choice(c, size=(n, s), p=p / p.sum()).astype("int64")
    return rng.integers(0, c, (n, s)).astype("int64")


def _scores(inputs, labels):
    x, w = inputs["Input"], inputs["Weight"]
    logits = _gemm.matmul(xp, w[labels], x[:, :, None])[:, :, 0]
    if inputs.get("Bias") is not None:
        logits = logits + inputs["Bias"].reshape(-1)[labels]
    return 1.0 / (1.0 + xp.exp(-logits))


@kernel("nce", FLOATS)
def nce(inputs, attrs):
    x, lab = inputs["Input"], inputs["Label"].astype("int64")
    labels = xp.concatenate([lab, _sample(inputs, attrs, x.shape[0])], axis=1)
    o = _scores(inputs, labels).astype("float64")
    b = _q(inputs, attrs, labels) * attrs["num_neg_samples"]
    t = lab.shape[1]
    cost = xp.concatenate(
        [-xp.log(o[:, :t] / (o[:, :t] + b[:, :t])), -xp.log(b[:, t:] / (o[:, t:] + b[:, t:]))],
        axis=1,
    )
    cost = cost.mean(axis=1, keepdims=True)
    if inputs.get("SampleWeight") is not None:
        cost = cost * inputs["SampleWeight"].reshape(-1, 1)
    return {
        "Cost": cost.astype(x.dtype),
        "SampleLogits": o.astype(x.dtype),
        "SampleLabels": xp.ascontiguousarray(labels),
    }


@kernel("nce_grad", FLOATS, wants_outputs=True)
def nce_grad(inputs, attrs, wanted):
    x, w = inputs["Input"], inputs["Weight"]
    labels = inputs["SampleLabels"].astype("int64")
    o = inputs["SampleLogits"].astype("float64")
    t = inputs["Label"].shape[1]
    b = _q(inputs, attrs, labels) * attrs["num_neg_samples"]
    dlogit = xp.concatenate(
        [
            -(b[:, :t] / (o[:, :t] + b[:, :t])) * (1 - o[:, :t]),
            o[:, t:] * (1 - o[:, t:]) / (o[:, t:] + b[:, t:]),
        ],
        axis=1,
    )
    scale = inputs["Cost@GRAD"].reshape(-1, 1) / labels.shape[1]
    if inputs.get("SampleWeight") is not None:
        scale = scale * inputs["SampleWeight"].reshape(-1, 1)
    dlogit = (dlogit * scale).astype(x.dtype)
    res = {}
    if "Input@GRAD" in wanted:
        res["Input@GRAD"] = _gemm.matmul(xp, dlogit[:, None, :], w[labels])[:, 0, :]
    if "Weight@GRAD" in wanted:
        gw = xp.zeros_like(w)
        scatter_add(
            xp, gw, labels.reshape(-1), (dlogit[:, :, None] * x[:, None, :]).reshape(-1, x.shape[1])
        )
        res["Weight@GRAD"] = gw
    if "Bias@GRAD" in wanted and inputs.get("Bias") is not None:
        gb = xp.zeros(inputs["Bias"].size, x.dtype)
        scatter_add(xp, gb, labels.reshape(-1), dlogit.reshape(-1))
        res["Bias@GRAD"] = gb.reshape(inputs["Bias"].shape)
    return res
