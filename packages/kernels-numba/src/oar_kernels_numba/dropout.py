"""dropout in training and its gradient: the mask, the product and the scale in one pass.

The uniform draws come from the generator the numpy kernel uses for the same op
(``Seed`` input, ``fix_seed`` + ``seed``, else a process-wide unseeded one), drawn the
same way (float32, compared with ``p`` in float32), so a seeded dropout's mask and
output are bit for bit the numpy kernel's; the unseeded generator is this plugin's
own (a fresh stream either way). What the compiled loop saves is the three passes
after the draws (compare, multiply, scale). Inference, ``dropout_prob >= 1`` and
uncommon inputs go to the kernels these override.
"""

from __future__ import annotations

import numpy as np

from oar_kernels_numba._arrays import DTYPES
from oar_kernels_numba._arrays import plain as _plain
from oar_kernels_numba._fallback import Fallback
from oar_kernels_numba._jit import loop, prange

_shared = np.random.default_rng()


@loop
def _dropout(x, u, p, one, zero, scale, upscale, out, mask):
    for i in prange(x.size):
        keep = u[i] >= p
        mask[i] = 1 if keep else 0
        v = x[i] * (one if keep else zero)
        out[i] = v * scale if upscale else v


@loop
def _dropout_grad(dy, mask, one, zero, scale, upscale, out):
    for i in prange(dy.size):
        v = dy[i] * (one if mask[i] else zero)
        out[i] = v * scale if upscale else v


def _generator(inputs, attrs):
    if "Seed" in inputs:
        return np.random.default_rng(int(np.asarray(inputs["Seed"]).reshape(-1)[0]))
    if attrs["fix_seed"]:
        return np.random.default_rng(attrs["seed"])
    return _shared


def _scalars(attrs, t):
    p = attrs["dropout_prob"]
    return t(1), t(0), t(1.0 / (1.0 - p)), attrs["dropout_implementation"] == "upscale_in_train"


class _Kernels:
    def __init__(self, device: str, priority: int) -> None:
        self.fb = {op: Fallback(op, device, priority) for op in ("dropout", "dropout_grad")}

    def dropout(self, inputs, attrs, wanted):
        x = inputs["X"]
        if attrs["is_test"] or attrs["dropout_prob"] >= 1.0 or not _plain(x):
            return self.fb["dropout"](x.dtype, inputs, attrs, wanted)
        u = _generator(inputs, attrs).random(x.shape, dtype=np.float32)
        out = np.empty_like(x)
        mask = np.empty(x.shape, np.uint8)
        p = np.float32(attrs["dropout_prob"])
        flat = (x.reshape(-1), u.reshape(-1), p, *_scalars(attrs, x.dtype.type))
        _dropout(x.size, *flat, out.reshape(-1), mask.reshape(-1))
        return {"Out": out, "Mask": mask}

    def dropout_grad(self, inputs, attrs):
        dy, mask = inputs["Out@GRAD"], inputs.get("Mask")
        ok = not attrs["is_test"] and attrs["dropout_prob"] < 1.0 and _plain(dy)
        ok = ok and type(mask) is np.ndarray and mask.dtype == np.uint8
        if not ok or mask.shape != dy.shape or not mask.flags.c_contiguous:
            return self.fb["dropout_grad"](dy.dtype, inputs, attrs)
        dx = np.empty_like(dy)
        scalars = _scalars(attrs, dy.dtype.type)
        _dropout_grad(dy.size, dy.reshape(-1), mask.reshape(-1), *scalars, dx.reshape(-1))
        return {"X@GRAD": dx}


def register(registry, family: str, device: str, priority: int) -> None:
    k = _Kernels(device, priority)
    registry.register_kernel("dropout", device, DTYPES, k.dropout, priority, wants_outputs=True)
    registry.register_kernel("dropout_grad", device, DTYPES, k.dropout_grad, priority)
