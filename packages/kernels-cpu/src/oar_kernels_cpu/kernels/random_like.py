"""numpy kernels for uniform/gaussian_random_batch_size_like and sampling_id."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import array_module, kernel
from oar_kernels_cpu.kernels._util import normal, rng_for

xp = array_module(__name__)


def _shape(inputs, attrs):
    shape = list(attrs["shape"])
    shape[attrs["output_dim_idx"]] = xp.shape(inputs["Input"])[attrs["input_dim_idx"]]
    return shape


@kernel("uniform_random_batch_size_like")
def uniform_random_batch_size_like(inputs, attrs):
    shape = _shape(inputs, attrs)
    out = (
        rng_for(xp, attrs["seed"]).uniform(attrs["min"], attrs["max"], shape).astype(attrs["dtype"])
    )
    if attrs["diag_num"] > 0:
        flat = out.reshape(shape[0], -1)
        n = attrs["diag_num"]
        flat[xp.arange(n), xp.arange(n) * attrs["diag_step"]] = attrs["diag_val"]
    return {"Out": out}


@kernel("gaussian_random_batch_size_like")
def gaussian_random_batch_size_like(inputs, attrs):
    out = normal(rng_for(xp, attrs["seed"]), attrs["mean"], attrs["std"], _shape(inputs, attrs))
    return {"Out": out.astype(attrs["dtype"])}


@kernel("sampling_id")
def sampling_id(inputs, attrs):
    """One class id per row, drawn from the row's probabilities (a uniform draw against the cumsum)."""
    x = inputs["X"]
    r = rng_for(xp, attrs["seed"]).uniform(attrs["min"], attrs["max"], (x.shape[0], 1))
    cum = xp.cumsum(x, axis=1)
    idx = (cum <= r).sum(axis=1)
    return {"Out": xp.minimum(idx, x.shape[1] - 1).astype(np.int64)}
