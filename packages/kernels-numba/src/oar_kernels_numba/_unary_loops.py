"""Compiled loops of the smooth activations (sigmoid, tanh, gelu, leaky_relu) and their grads.

Each runs over flat contiguous arrays. numba calls libm's scalar exp/tanh/erf, which
cost 10-40x numpy's vectorised float32 ``exp``/``tanh``; so the loops that need one
are split around a numpy call: a compiled pass writes the transcendental's argument,
numpy's ufunc evaluates it in place, a second compiled pass combines (three passes
where the numpy kernels take five to ten). ``tanh`` forward stays numpy's (one
vectorised pass already). sigmoid and gelu use the numpy kernels' formulas
(gelu's erf is the same Abramowitz-Stegun polynomial) in float64, rounded once:
within float tolerance of the numpy kernels. The gradients written through ``Out``
(sigmoid, tanh) and leaky_relu do the numpy kernels' float operations in the same
order and dtype (scalars passed typed: a literal ``1`` would promote float32 to
float64), bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from oar_kernels_numba._jit import loop, prange

_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@loop
def _neg_abs(x, out):
    for i in prange(x.size):
        out[i] = -abs(x[i])


@loop
def _sigmoid_finish(x, e, out):
    for i in prange(x.size):
        ei = np.float64(e[i])  # exp(-|x|)
        out[i] = 1.0 / (1.0 + ei) if x[i] >= 0 else ei / (1.0 + ei)


def sigmoid(size, x, out):
    buf = np.empty_like(x) if np.may_share_memory(x, out) else out
    _neg_abs(size, x, buf)
    np.exp(buf, out=buf)
    _sigmoid_finish(size, x, buf, out)


@loop
def sigmoid_grad(y, d, one, out):
    for i in prange(y.size):
        out[i] = d[i] * y[i] * (one - y[i])


@loop
def tanh_grad(y, d, one, out):
    for i in prange(y.size):
        out[i] = d[i] * (one - y[i] * y[i])


@loop
def leaky_relu(x, alpha, out):
    for i in prange(x.size):
        v = x[i]
        out[i] = v if v > 0 else v * alpha


@loop
def leaky_relu_grad(x, d, alpha, one, out):
    for i in prange(x.size):
        out[i] = d[i] * (one if x[i] > 0 else alpha)


@loop
def _gelu_arg(x, approximate, out):
    """exp's argument -x²/2 (erf form) or tanh's argument (approximate form)."""
    for i in prange(x.size):
        v = np.float64(x[i])
        out[i] = _SQRT_2_PI * (v + 0.044715 * v * v * v) if approximate else -0.5 * v * v


@loop
def _gelu_finish(x, e, approximate, d, grad, out):
    """e: tanh(arg) or exp(-x²/2). Forward: 0.5 x (1 + tanh | erf); grad: d * gelu'(x)."""
    for i in prange(x.size):
        v = np.float64(x[i])
        ei = np.float64(e[i])
        if approximate:
            if grad:
                w = 1.0 + 3 * 0.044715 * v * v
                g = 0.5 * (1.0 + ei) + 0.5 * v * (1.0 - ei * ei) * _SQRT_2_PI * w
            else:
                g = 0.5 * v * (1.0 + ei)
        else:
            a = abs(v) * _INV_SQRT_2
            t = 1.0 / (1.0 + 0.3275911 * a)
            p = -1.453152027 + t * 1.061405429
            p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * p)))
            erf = 1.0 - p * ei  # erf(|x| / sqrt 2): exp(-a²) = exp(-x²/2) = ei
            erf = erf if v >= 0 else -erf
            g = 0.5 * (1.0 + erf) + v * ei * _INV_SQRT_2PI if grad else 0.5 * v * (1.0 + erf)
        out[i] = d[i] * g if grad else g


def _gelu(size, x, approximate, d, out):
    buf = np.empty_like(x)
    _gelu_arg(size, x, approximate, buf)
    (np.tanh if approximate else np.exp)(buf, out=buf)
    grad = d is not None
    _gelu_finish(size, x, buf, approximate, d if grad else x, grad, out)


def gelu(size, x, approximate, out):
    _gelu(size, x, approximate, None, out)


def gelu_grad(size, x, d, approximate, out):
    _gelu(size, x, approximate, d, out)
