"""Compiled loops of the smooth activations (sigmoid, tanh, gelu, leaky_relu) and their grads.

Each loop runs over flat contiguous arrays. Transcendentals (exp, tanh, the erf of
gelu) are libm's, not numpy's vectorised ones, so forward results differ from the
numpy kernels in the last bits (float tolerance); the gradients written through
``Out`` (sigmoid, tanh) and leaky_relu do the numpy kernels' float operations in the
same order and dtype (scalars passed typed: a literal ``1`` would promote float32 to
float64), bit for bit. gelu computes in float64 and rounds once.
"""

from __future__ import annotations

import math

import numpy as np

from oar_kernels_numba._jit import loop, prange

_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@loop
def sigmoid(x, out):
    for i in prange(x.size):
        v = x[i]
        if v >= 0:
            out[i] = 1 / (1 + np.exp(-v))
        else:
            e = np.exp(v)
            out[i] = e / (1 + e)


@loop
def sigmoid_grad(y, d, one, out):
    for i in prange(y.size):
        out[i] = d[i] * y[i] * (one - y[i])


@loop
def tanh(x, out):
    for i in prange(x.size):
        out[i] = np.tanh(x[i])


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
def gelu(x, approximate, out):
    for i in prange(x.size):
        v = np.float64(x[i])
        if approximate:
            out[i] = 0.5 * v * (1 + math.tanh(_SQRT_2_PI * (v + 0.044715 * v * v * v)))
        else:
            out[i] = 0.5 * v * (1 + math.erf(v * _INV_SQRT_2))


@loop
def gelu_grad(x, d, approximate, out):
    for i in prange(x.size):
        v = np.float64(x[i])
        if approximate:
            t = math.tanh(_SQRT_2_PI * (v + 0.044715 * v * v * v))
            g = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * _SQRT_2_PI * (1 + 3 * 0.044715 * v * v)
        else:
            g = 0.5 * (1 + math.erf(v * _INV_SQRT_2)) + v * math.exp(-0.5 * v * v) * _INV_SQRT_2PI
        out[i] = d[i] * g
