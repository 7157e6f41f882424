"""numpy kernels for shuffle_batch and its gradient."""

from __future__ import annotations

from oar_kernels_cpu.kernels import array_module, kernel
from oar_kernels_cpu.kernels._util import permutation, rng_for

xp = array_module(__name__)


@kernel("shuffle_batch")
def shuffle_batch(inputs, attrs):
    x = inputs["X"]
    seed_in = inputs.get("Seed")
    seed = int(seed_in.reshape(-1)[0]) if seed_in is not None and seed_in.size else 0
    rng = rng_for(xp, seed or attrs["startup_seed"])
    rows = x.reshape(-1, x.shape[-1])
    perm = permutation(xp, rng, rows.shape[0]).astype("int64")
    next_seed = int(rng.integers(1, 2**31 - 1))
    return {
        "Out": rows[perm].reshape(x.shape),
        "ShuffleIdx": perm,
        "SeedOut": xp.asarray([next_seed], dtype="int64"),
    }


@kernel("shuffle_batch_grad")
def shuffle_batch_grad(inputs, attrs):
    d = inputs["Out@GRAD"]
    perm = inputs["ShuffleIdx"]
    rows = d.reshape(-1, d.shape[-1])
    dx = xp.empty_like(rows)
    dx[perm] = rows
    return {"X@GRAD": dx.reshape(d.shape)}
