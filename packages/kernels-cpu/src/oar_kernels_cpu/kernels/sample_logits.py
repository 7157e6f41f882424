"""sample_logits: gather the sampled logits (log-uniform, distinct, shared by the batch)."""

from __future__ import annotations

import math

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._util import rng_for, scatter_add

xp = array_module(__name__)


def _log_uniform(k, rng_range):
    k = k.astype("float64")
    return xp.log((k + 2.0) / (k + 1.0)) / math.log(rng_range + 1.0)


def _sample(n_classes, num, seed):
    """``num`` distinct log-uniform classes and how many draws it took."""
    rng = rng_for(xp, seed)
    seen: list = []
    tries = 0
    while len(seen) < num:
        u = float(rng.random())
        k = min(int(math.floor(math.exp(u * math.log(n_classes + 1.0)))) - 1, n_classes - 1)
        tries += 1
        if k not in seen:
            seen.append(k)
    return xp.asarray(seen, dtype="int64"), tries


@kernel("sample_logits", FLOATS)
def sample_logits(inputs, attrs):
    logits, lab = inputs["Logits"], inputs["Labels"].astype("int64")
    n, k = logits.shape
    if attrs["use_customized_samples"]:
        samples = inputs["CustomizedSamples"].astype("int64")
        probs = inputs["CustomizedProbabilities"].astype(logits.dtype)
    else:
        neg, tries = _sample(k, attrs["num_samples"], attrs["seed"])
        samples = xp.concatenate([lab, xp.broadcast_to(neg, (n, neg.size))], axis=1)
        p = _log_uniform(samples, k)
        # probability that a class shows up in ``tries`` draws (distinct sampling)
        probs = (-xp.expm1(tries * xp.log1p(-p))).astype(logits.dtype)
    t = lab.shape[1]
    rows = xp.arange(n)[:, None]
    sampled = logits[rows, samples] - xp.log(probs)
    if attrs["remove_accidental_hits"]:
        hit = (samples[:, t:, None] == lab[:, None, :]).any(axis=2)
        sampled[:, t:] = xp.where(hit, sampled[:, t:] - 1e20, sampled[:, t:])
    return {
        "Samples": samples,
        "Probabilities": probs,
        "SampledLogits": sampled.astype(logits.dtype, copy=False),
        "SampledLabels": xp.broadcast_to(xp.arange(t, dtype="int64"), (n, t)).copy(),
        "LogitsDim": xp.asarray(logits.shape, dtype="int64"),
        "LabelsDim": xp.asarray(lab.shape, dtype="int64"),
    }


@kernel("sample_logits_grad", FLOATS)
def sample_logits_grad(inputs, attrs):
    logits, samples, d = (
        inputs["Logits"],
        inputs["Samples"].astype("int64"),
        inputs["SampledLogits@GRAD"],
    )
    g = xp.zeros_like(logits)
    rows = xp.broadcast_to(xp.arange(logits.shape[0])[:, None], samples.shape)
    scatter_add(xp, g, (rows, samples), d)
    return {"Logits@GRAD": g}
