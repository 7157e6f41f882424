"""The adam updates of every parameter in one fused step (a ``repeated`` fusion).

An optimizer appends one ``adam`` op per parameter, each a kernel call whose Python
checks and scalar arithmetic (the bias-corrected learning rate, the beta powers)
cost several µs, and whose small parameters (biases) go to the numpy kernel's ten
passes. Fused, the run of adam ops is one step: per parameter one compiled call
that updates the parameter, both moments and both beta powers, with the float
operations of the per-op kernels (bit for bit their results). A parameter the
compiled call does not cover (SelectedRows gradients, beta tensors, other dtypes or
layouts, arrays large enough for the parallel loop) goes through the adam kernel
registered for the device.
"""

from __future__ import annotations

import numpy as np
from oar.api import registries

from oar_kernels_numba._limits import PARALLEL_MIN
from oar_kernels_numba.compat import load_numba

FLOAT_DTYPES = frozenset(np.dtype(t) for t in ("float32", "float64"))
IN_SLOTS = ("Param", "Grad", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow", "LearningRate")
OUT_SLOTS = ("ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut", "Beta2PowOut")


def _flat_ok(p, g, m1, m2) -> bool:
    for a in (p, g, m1, m2):
        if type(a) is not np.ndarray or not a.flags.c_contiguous:
            return False
    return (
        p.dtype in FLOAT_DTYPES
        and g.shape == p.shape
        and m1.shape == p.shape
        and m2.shape == p.shape
        and g.dtype == p.dtype
        and m1.dtype == p.dtype
        and m2.dtype == p.dtype
        and p.size < PARALLEL_MIN
    )


def _scalars_ok(b1p, b2p, lr) -> bool:
    for a in (b1p, b2p, lr):
        if type(a) is not np.ndarray or a.size != 1 or a.dtype not in FLOAT_DTYPES:
            return False
    return True


class _Op:
    """One adam op of the run: its slot keys and its constants per dtype."""

    def __init__(self, k: int, attrs: dict) -> None:
        self.ins = tuple(f"{k}.{s}" for s in IN_SLOTS)
        self.outs = tuple(f"{k}.{s}" for s in OUT_SLOTS)
        self.prefix = f"{k}."
        # Fluid keeps float attrs in float32 (as the per-op kernels read them)
        self.b1 = float(np.float32(attrs["beta1"]))
        self.b2 = float(np.float32(attrs["beta2"]))
        self.eps = attrs["epsilon"]
        self._consts: dict = {}

    def consts(self, dtype) -> tuple:
        got = self._consts.get(dtype)
        if got is None:
            t = dtype.type
            got = (t(self.b1), t(self.b2), t(1 - self.b1), t(1 - self.b2), t(self.eps))
            self._consts[dtype] = got
        return got


def _per_op(device: str, op: _Op, inputs: dict, attrs: dict) -> dict:
    """The registered adam kernel on one op's slots (the cases the loop does not cover)."""
    n = len(op.prefix)
    ins = {key[n:]: v for key, v in inputs.items() if key.startswith(op.prefix)}
    dtype = ins["Param"].dtype.name
    entry = registries().kernels.lookup("adam", device, dtype)
    res = entry.kernel(ins, attrs[op.prefix[:-1]])
    return {op.prefix + slot: v for slot, v in res.items()}


def make_adam_group(device: str):
    def make(ops, block):
        if load_numba() is None:
            return None
        for op in ops:
            if any(op.inputs.get(s) for s in ("Beta1Tensor", "Beta2Tensor")):
                return None  # betas read from tensors each step: the per-op kernels
            if any(not op.outputs.get(s) for s in OUT_SLOTS):
                return None
        from oar_kernels_numba.optimizer import adam_step

        run = [_Op(k, op.attrs) for k, op in enumerate(ops)]

        def adam_group(inputs, attrs):
            out: dict = {}
            for op in run:
                p, g, m1, m2, b1p, b2p, lr = (inputs.get(key) for key in op.ins)
                if _flat_ok(p, g, m1, m2) and _scalars_ok(b1p, b2p, lr):
                    b1, b2, omb1, omb2, eps = op.consts(p.dtype)
                    flat = p.reshape(-1), g.reshape(-1), m1.reshape(-1), m2.reshape(-1)
                    adam_step(*flat, b1p.reshape(-1), b2p.reshape(-1), lr.reshape(-1),
                              b1, b2, omb1, omb2, eps)  # fmt: skip
                    for key, v in zip(op.outs, (p, m1, m2, b1p, b2p)):
                        out[key] = v
                else:
                    out.update(_per_op(device, op, inputs, attrs))
            return out

        return adam_group

    return make
