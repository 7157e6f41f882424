"""dpsgd: clip the gradient's L2 norm, add Gaussian noise, SGD step (in place)."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._util import rng_for

xp = array_module(__name__)


@kernel("dpsgd", FLOATS)
def dpsgd(inputs, attrs):
    p, g = inputs["Param"], inputs["Grad"]
    lr = float(xp.asarray(inputs["LearningRate"]).reshape(-1)[0])
    norm = float(xp.sqrt(xp.sum(xp.square(g.astype("float64")))))
    scale = norm / attrs["clip"] if norm > attrs["clip"] else 1.0
    noise = 0.0
    if attrs["sigma"] != 0:
        noise = float(rng_for(xp, attrs["seed"]).normal(0.0, attrs["sigma"]))
    p -= (lr * (g / scale + noise / attrs["batch_size"])).astype(p.dtype, copy=False)
    return {"ParamOut": p}
