"""Activations and their gradients: one pass, on several threads for large tensors.

relu: numpy's ``maximum`` is already one vectorised pass; what these add is the
parallel loop at the machine's default threads (and the same in-place reuse of dying
inputs as the numpy kernels). Results are bit for bit the numpy kernels' (NaN
propagates through ``relu`` as through ``np.maximum``; the gradient is ``d * (y > 0)``).

sigmoid, gelu, leaky_relu and the gradients of those and tanh: one to three passes
where the numpy kernels take two to ten; see ``_unary_loops`` for what is bit for
bit and what is within float tolerance.
"""

from __future__ import annotations

import numpy as np

from oar_kernels_numba._arrays import DTYPES
from oar_kernels_numba._arrays import plain as _plain
from oar_kernels_numba._fallback import Fallback
from oar_kernels_numba._jit import SMALL, loop, prange


@loop
def _relu(x, out):
    for i in prange(x.size):
        v = x[i]
        out[i] = v if (v > 0 or v != v) else 0


@loop
def _relu_grad(y, d, out):
    for i in prange(y.size):
        out[i] = d[i] * (1 if y[i] > 0 else 0)


# In place, each loop has a variant of its own: with ``out`` the same array as an input, the
# vectorised code's overlap check fails and the loop runs element by element (0.78 against
# 0.22 ms for MNIST's first-layer relu_grad, 1M float32).
@loop
def _relu_into(x):
    for i in prange(x.size):
        v = x[i]
        x[i] = v if (v > 0 or v != v) else 0


@loop
def relu_grad_into(y, d):
    for i in prange(y.size):
        d[i] = d[i] * (1 if y[i] > 0 else 0)


def relu_grad_to(y, d, out) -> None:
    """``out = d * (y > 0)`` for C-contiguous arrays of one shape, ``out`` new or ``d`` itself."""
    if out is d:
        relu_grad_into(y.size, y.reshape(-1), d.reshape(-1))
    else:
        _relu_grad(y.size, y.reshape(-1), d.reshape(-1), out.reshape(-1))


class _Kernels:
    def __init__(self, device: str, priority: int) -> None:
        self.fb = {op: Fallback(op, device, priority) for op in ("relu", "relu_grad")}

    def relu(self, inputs, attrs, donated=frozenset()):
        x = inputs["X"]
        if x.size < SMALL or not _plain(x):
            return self.fb["relu"](x.dtype, inputs, attrs, donated=donated)
        if "X" in donated:
            _relu_into(x.size, x.reshape(-1))
            return {"Out": x}
        out = np.empty_like(x)
        _relu(x.size, x.reshape(-1), out.reshape(-1))
        return {"Out": out}

    def relu_grad(self, inputs, attrs, donated=frozenset()):
        y, d = inputs["Out"], inputs["Out@GRAD"]
        if d.size < SMALL or not (
            _plain(y) and _plain(d) and y.shape == d.shape and y.dtype == d.dtype
        ):
            return self.fb["relu_grad"](d.dtype, inputs, attrs, donated=donated)
        out = d if "Out@GRAD" in donated else np.empty_like(d)
        relu_grad_to(y, d, out)
        return {"X@GRAD": out}


# op -> (the forward's scalar arguments from attrs and the dtype's scalar type)
_SCALARS = {
    "sigmoid": lambda a, t: (),
    "gelu": lambda a, t: (bool(a["approximate"]),),
    "leaky_relu": lambda a, t: (t(a["alpha"]),),
}
# op -> (the grad's scalar arguments, the forward slot its loop reads: "Out" or "X")
_GRAD_SCALARS = {
    "sigmoid": (lambda a, t: (t(1),), "Out"),
    "tanh": (lambda a, t: (t(1),), "Out"),
    "gelu": (lambda a, t: (bool(a["approximate"]),), "X"),
    "leaky_relu": (lambda a, t: (t(a["alpha"]), t(1)), "X"),
}


def _forward(op: str, fb: Fallback):
    from oar_kernels_numba import _unary_loops

    fn, scalars = getattr(_unary_loops, op), _SCALARS[op]

    def forward(inputs, attrs, donated=frozenset()):
        x = inputs["X"]
        if not _plain(x):
            return fb(x.dtype, inputs, attrs, donated=donated)
        out = x if "X" in donated else np.empty_like(x)
        fn(x.size, x.reshape(-1), *scalars(attrs, x.dtype.type), out.reshape(-1))
        return {"Out": out}

    return forward


def _backward(op: str, fb: Fallback):
    from oar_kernels_numba import _unary_loops

    fn = getattr(_unary_loops, op + "_grad")
    scalars, slot = _GRAD_SCALARS[op]

    def backward(inputs, attrs):
        a, d = inputs.get(slot), inputs["Out@GRAD"]
        if not (_plain(a) and _plain(d) and a.shape == d.shape and a.dtype == d.dtype):
            return fb(d.dtype, inputs, attrs)
        out = np.empty_like(d)
        fn(d.size, a.reshape(-1), d.reshape(-1), *scalars(attrs, d.dtype.type), out.reshape(-1))
        return {"X@GRAD": out}

    return backward


def register(registry, family: str, device: str, priority: int) -> None:
    k = _Kernels(device, priority)
    # small=: a plan hands small arrays straight to the numpy kernels (as these do)
    registry.register_kernel(
        "relu", device, DTYPES, k.relu, priority, inplace=True, small=("X", SMALL)
    )
    registry.register_kernel(
        "relu_grad", device, DTYPES, k.relu_grad, priority, inplace=True, small=("Out@GRAD", SMALL)
    )
    for op in _SCALARS:
        fwd = _forward(op, Fallback(op, device, priority))
        registry.register_kernel(op, device, DTYPES, fwd, priority, inplace=True)
    for op in _GRAD_SCALARS:  # tanh's forward stays numpy's: one vectorised pass already
        bwd = _backward(op, Fallback(op + "_grad", device, priority))
        registry.register_kernel(op + "_grad", device, DTYPES, bwd, priority)
